// Package reading reads the data a release publishes: long-format CSV
// (optionally gzip) or Parquet files of series,time,state rows, or one
// state per line, into sequences on a chain's time grid (Data, ReadData),
// a streamed summary (Summary, ReadSummary) or unassembled rows for a
// pipeline (ReadRows, AssembleSeries); how a file is read is a Spec or the
// reading flags (DataFlags), numeric readings are cut into Levels. It
// also writes Parquet (WriteParquet, ConvertFile).
//
// It prices nothing and draws no noise (package release does). A file is
// read the same way whatever its format (a Parquet file gives the Data
// its CSV gives), or refused with an error naming the file and line; a
// reading whose value is missing stays in its series' pattern and in no
// bin (docs/math.md §4.8).
package reading
