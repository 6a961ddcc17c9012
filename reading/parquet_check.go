package reading

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A corrupt Parquet file must be an error, not an allocation of the size
// it claims: the decoder allocates lists, strings and pages at the sizes
// written in the file before reading them. checkThrift walks a Thrift
// compact-protocol struct and refuses any size larger than the bytes that
// remain (each element takes at least one byte), so what the decoder then
// allocates is bounded by the bytes read; checkPages does the same for the
// page headers of the columns read.

// maxPage bounds a page's size and maxPageValues its number of values.
const (
	maxPage       = 256 << 20
	maxPageValues = 1 << 23
	maxThriftNest = 64
)

var errThrift = errors.New("corrupt metadata")

// checkThrift checks the struct at the start of b and returns its length.
func checkThrift(b []byte) (int, error) {
	c := thriftCheck{b: b}
	if err := c.skip(12, 0); err != nil {
		return 0, err
	}
	return c.i, nil
}

type thriftCheck struct {
	b []byte
	i int
}

func (c *thriftCheck) byte() (byte, error) {
	if c.i >= len(c.b) {
		return 0, errThrift
	}
	c.i++
	return c.b[c.i-1], nil
}

func (c *thriftCheck) uvarint() (uint64, error) {
	v, n := binary.Uvarint(c.b[c.i:])
	if n <= 0 {
		return 0, errThrift
	}
	c.i += n
	return v, nil
}

// size reads a length and checks that as many elements (at least one
// byte each) fit in what remains.
func (c *thriftCheck) size(n uint64) (int, error) {
	if n > uint64(len(c.b)-c.i) {
		return 0, errThrift
	}
	return int(n), nil
}

func (c *thriftCheck) skip(typ byte, depth int) error {
	if depth > maxThriftNest {
		return errThrift
	}
	switch typ {
	case 1, 2: // a boolean in a field header
		return nil
	case 3: // byte (and a boolean in a list)
		_, err := c.byte()
		return err
	case 4, 5, 6: // zigzag varints
		_, err := c.uvarint()
		return err
	case 7: // double
		if _, err := c.size(8); err != nil {
			return err
		}
		c.i += 8
		return nil
	case 8: // binary
		n, err := c.uvarint()
		if err != nil {
			return err
		}
		m, err := c.size(n)
		c.i += m
		return err
	case 9, 10: // list, set
		h, err := c.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = c.uvarint(); err != nil {
				return err
			}
		}
		m, err := c.size(n)
		if err != nil {
			return err
		}
		et := h & 0xf
		if et == 1 || et == 2 {
			et = 3
		}
		for range m {
			if err := c.skip(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := c.uvarint()
		if err != nil || n == 0 {
			return err
		}
		m, err := c.size(n)
		if err != nil {
			return err
		}
		kv, err := c.byte()
		if err != nil {
			return err
		}
		kt, vt := kv>>4, kv&0xf
		if kt == 1 || kt == 2 {
			kt = 3
		}
		if vt == 1 || vt == 2 {
			vt = 3
		}
		for range m {
			if err := c.skip(kt, depth+1); err != nil {
				return err
			}
			if err := c.skip(vt, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		for {
			h, err := c.byte()
			if err != nil {
				return err
			}
			if h == 0 {
				return nil // stop
			}
			if h>>4 == 0 {
				if _, err := c.uvarint(); err != nil { // the field id
					return err
				}
			}
			if err := c.skip(h&0xf, depth+1); err != nil {
				return err
			}
		}
	}
	return errThrift
}

// checkFooter checks the file's footer before the decoder reads it.
func checkFooter(r io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("%d bytes", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != parquetMagic || n > size-12 {
		return errors.New("no footer (is it cut short?)")
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	if _, err := checkThrift(footer); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	return nil
}

// checkPages checks the page headers of one column chunk.
func checkPages(r io.ReaderAt, size int64, md *format.ColumnMetaData) error {
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	if start < 4 || md.TotalCompressedSize < 0 || end < start || end > size-8 {
		return fmt.Errorf("column chunk at %d of %d bytes outside the file", start, md.TotalCompressedSize)
	}
	buf := make([]byte, 64<<10)
	for pos := start; pos < end; {
		w := buf[:min(int64(len(buf)), end-pos)]
		if _, err := r.ReadAt(w, pos); err != nil && err != io.EOF {
			return err
		}
		n, err := checkThrift(w)
		if err != nil {
			return fmt.Errorf("page header at %d: %w", pos, err)
		}
		var h format.PageHeader
		if err := thrift.NewDecoder((&thrift.CompactProtocol{}).NewReaderFromBytes(w[:n])).Decode(&h); err != nil {
			return fmt.Errorf("page header at %d: %w", pos, err)
		}
		values := int32(0)
		switch {
		case h.DataPageHeader.Valid:
			values = h.DataPageHeader.V.NumValues
		case h.DataPageHeaderV2.Valid:
			values = h.DataPageHeaderV2.V.NumValues
		case h.DictionaryPageHeader.Valid:
			values = h.DictionaryPageHeader.V.NumValues
		}
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > end-pos-int64(n) || h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxPage || values < 0 || values > maxPageValues {
			return fmt.Errorf("page at %d: %d bytes (%d uncompressed) of %d values in a chunk of %d bytes (at most %d bytes, %d values a page)", pos, h.CompressedPageSize, h.UncompressedPageSize, values, md.TotalCompressedSize, maxPage, maxPageValues)
		}
		pos += int64(n) + int64(h.CompressedPageSize)
	}
	return nil
}
