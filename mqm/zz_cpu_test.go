package mqm

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ZZCPU=file:method:n
func TestZZCPU(t *testing.T) {
	spec := os.Getenv("ZZCPU")
	if spec == "" {
		t.Skip()
	}
	var file, meth string
	var n int
	fmt.Sscanf(spec, "%s", &file)
	parts := []string{}
	cur := ""
	for _, c := range spec {
		if c == ':' {
			parts = append(parts, cur)
			cur = ""
		} else {
			cur += string(c)
		}
	}
	parts = append(parts, cur)
	file, meth = parts[0], parts[1]
	n, _ = strconv.Atoi(parts[2])
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	class, err := markov.ParseClass(f, file)
	if err != nil {
		t.Fatal(err)
	}
	m := Exact
	if meth == "approx" {
		m = Approx
	}
	var r Result
	r, _ = Scale(class, 1_000_000, 1, m) // warm
	c0, w0 := cpuNow(), time.Now()
	for range n {
		r, err = Scale(class, 1_000_000, 1, m)
		if err != nil {
			t.Fatal(err)
		}
	}
	c1, w1 := cpuNow(), time.Now()
	fmt.Printf("ZZ %s %s sigma=%v cpu/op=%.3fms wall/op=%.3fms\n", file, meth, r.Sigma, float64(c1-c0)/float64(n)/1e6, float64(w1.Sub(w0))/float64(n)/1e6)
}
