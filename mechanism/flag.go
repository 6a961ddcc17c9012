package mechanism

// Flag is a release mechanism given on a command line, in ParseRelease's
// spelling: a flag.Value (and a pflag.Value).
type Flag struct{ Name Name }

// String is the mechanism's name.
func (f *Flag) String() string { return string(f.Name) }

// Set parses s (ParseRelease).
func (f *Flag) Set(s string) error {
	n, err := ParseRelease(s)
	if err != nil {
		return err
	}
	f.Name = n
	return nil
}

// Type names the flag's value in usage lines.
func (f *Flag) Type() string { return "mechanism" }
