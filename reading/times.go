package reading

import (
	"fmt"
	"math"
	"time"
)

// Times are held as float64 seconds since the Unix epoch. Every instant
// an RFC 3339 timestamp can write in UTC — years 0000 to 9999 — is one of
// them: a float64 holds those seconds to within 31 µs, and they are read
// from time.Time.Unix, never through UnixNano or a time.Duration, whose
// int64 nanoseconds wrap outside 1677-09-21 … 2262-04-11 (a year-9999
// reading dated 1816, two readings of 1600 in windows of 2184). A time
// outside the range, written as a number or with an offset past a year
// end, is refused with the range: never wrapped.
const (
	// MinTime is 0000-01-01T00:00:00Z in Unix seconds, the first time read.
	MinTime = -62167219200
	// MaxTime is 10000-01-01T00:00:00Z in Unix seconds: every time read
	// is before it.
	MaxTime = 253402300800
)

// timeRangeText is the range of times read, as an error says it.
var timeRangeText = fmt.Sprintf("times must lie from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z (Unix seconds %d to %d), the instants an RFC 3339 timestamp writes", int64(MinTime), int64(MaxTime-1))

// TimeRangeError is a time outside MinTime … MaxTime.
type TimeRangeError struct{ Seconds float64 }

func (e *TimeRangeError) Error() string {
	return fmt.Sprintf("%.6g seconds after 1970: out of range: %s; is the time unit right?", e.Seconds, timeRangeText)
}

// checkSeconds refuses a time (seconds since the epoch) outside the range.
func checkSeconds(x float64) error {
	if !(x >= MinTime && x < MaxTime) {
		return &TimeRangeError{x}
	}
	return nil
}

// unixSeconds is t in seconds since the epoch, exactly to the second and
// rounded below it; a time outside the range is an error.
func unixSeconds(t time.Time) (float64, error) {
	s := t.Unix()
	if s < MinTime || s >= MaxTime {
		return 0, fmt.Errorf("%s is out of range: %s", t.UTC().Format(time.RFC3339Nano), timeRangeText)
	}
	return float64(s) + float64(t.Nanosecond())/1e9, nil
}

// TimeAt is the instant of t seconds since the epoch (t in the range;
// whole seconds are exact, the fraction to the nanosecond float64 holds).
func TimeAt(t float64) time.Time {
	s := math.Floor(t)
	return time.Unix(int64(s), int64((t-s)*1e9))
}

// unitTime is the instant of v units of scale nanoseconds since the
// epoch (a Parquet timestamp), without multiplying v into nanoseconds:
// a millisecond timestamp of year 9999 does not fit in int64 nanoseconds.
func unitTime(v, scale int64) time.Time {
	per := int64(time.Second) / scale // units per second
	s, r := v/per, v%per
	if r < 0 {
		s, r = s-1, r+per
	}
	return time.Unix(s, r*scale)
}
