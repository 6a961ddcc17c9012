package record

// SeriesCount is how many distinct series the release's segments read.
func (r Release) SeriesCount() int {
	seen := map[string]bool{}
	for _, s := range r.Segments {
		seen[s.Series] = true
	}
	return len(seen)
}
