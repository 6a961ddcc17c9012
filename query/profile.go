package query

import "fmt"

// Profile is a fixed set of cells and the rule that puts a reading in
// one of them from its wall-clock time (docs/math.md §4.15): the cells
// depend on the kind alone, never on the data, and every reading falls in
// exactly one, so a profile of any query costs what one group of it does.
type Profile struct {
	name  string
	cells []string
	of    func(hour int64) int
}

// Profiles are the kinds ParseProfile knows.
var Profiles = []string{"hour-of-day", "day-of-week", "week-hour"}

// weekdays name the days Monday first (ISO 8601).
var weekdays = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// ParseProfile is the profile of kind s, one of Profiles.
func ParseProfile(s string) (*Profile, error) {
	switch s {
	case "hour-of-day":
		cells := make([]string, 24)
		for h := range cells {
			cells[h] = fmt.Sprintf("%02d", h)
		}
		return &Profile{s, cells, hourOfDay}, nil
	case "day-of-week":
		return &Profile{s, weekdays, func(h int64) int { return dayOfWeek(h) }}, nil
	case "week-hour":
		var cells []string
		for _, d := range weekdays {
			for h := range 24 {
				cells = append(cells, fmt.Sprintf("%s %02d", d, h))
			}
		}
		return &Profile{s, cells, func(h int64) int { return dayOfWeek(h)*24 + hourOfDay(h) }}, nil
	}
	return nil, fmt.Errorf("profile %q: want hour-of-day, day-of-week or week-hour", s)
}

// Name is the profile's kind.
func (p *Profile) Name() string { return p.name }

// Cells names the profile's cells in order (00..23; Mon..Sun; Mon 00..Sun
// 23).
func (p *Profile) Cells() []string { return p.cells }

// Cell is the index in Cells of a reading whose wall-clock hour, counted
// from 1970-01-01 00:00 wall-clock time, is hour: the calendar window of
// width one hour of the reading's time (release.WindowOf), so a profile's
// cells follow the windows' time-zone and daylight-saving rules exactly.
func (p *Profile) Cell(hour int64) int { return p.of(hour) }

func hourOfDay(h int64) int { return int(floorMod(h, 24)) }

// dayOfWeek is Monday = 0: 1970-01-01 was a Thursday (3).
func dayOfWeek(h int64) int { return int(floorMod(floorDiv(h, 24)+3, 7)) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
