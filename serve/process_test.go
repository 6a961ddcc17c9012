package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

var (
	puffOnce sync.Once
	puffBin  string
	puffErr  error
)

// puff builds the command once per test run.
func puff(t *testing.T) string {
	t.Helper()
	puffOnce.Do(func() {
		dir, err := os.MkdirTemp("", "puffserve")
		if err != nil {
			puffErr = err
			return
		}
		puffBin = filepath.Join(dir, "puff")
		if out, err := exec.Command("go", "build", "-o", puffBin, "../cmd/puff").CombinedOutput(); err != nil {
			puffErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if puffErr != nil {
		t.Fatal(puffErr)
	}
	return puffBin
}

// startServe runs puff serve on a free port and waits until it answers.
func startServe(t *testing.T, dsn string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(puff(t), append([]string{"serve", "--ledger", dsn, "--addr", addr, "--data-dir", t.TempDir()}, args...)...)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	url := "http://" + addr
	for range 200 {
		if resp, err := http.Get(url + "/v1/openapi.json"); err == nil {
			resp.Body.Close()
			return url, cmd
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("puff serve on %s did not start", addr)
	return "", nil
}

// burst sends releases of ε from n clients, round robin over the servers,
// until each client got `each` answers or stop is closed; it returns the
// 201 answers and the statuses.
func burst(t *testing.T, urls []string, token string, n, each int, eps string, stop <-chan struct{}) ([]answer, map[int]int) {
	var mu sync.Mutex
	var answers []answer
	codes := map[int]int{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for c := range n {
		wg.Go(func() {
			for i := range each {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("POST", urls[(c+i)%len(urls)]+"/v1/datasets/activity/releases", strings.NewReader(`{"method": "exact", "epsilon": `+eps+`}`))
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					codes[-1]++ // the server went away
					mu.Unlock()
					continue
				}
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				if err != nil {
					codes[-1]++
				} else {
					codes[resp.StatusCode]++
					if resp.StatusCode == 201 {
						var a answer
						if json.Unmarshal(raw, &a) == nil {
							answers = append(answers, a)
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return answers, codes
}

func releaseToken(t *testing.T, dsn string) (ledger.Store, string) {
	t.Helper()
	store, err := ledger.Open(context.Background(), dsn, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	secret, _, err := store.CreateToken(context.Background(), []string{"release:activity"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store, secret
}

// Two server processes on one PostgreSQL ledger: the budget holds across
// them and every 201 is one ledger row with the answer sent (29 releases
// of 0.1 fit in 3: the dp-leakage rule prices 30 a little over 3, as in
// TestConcurrentReleasesSpendExactlyTheBudget).
func TestTwoServersOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dsn := pgtest.DSN(t)
	a, _ := startServe(t, dsn, "--demo")
	b, _ := startServe(t, dsn)
	store, token := releaseToken(t, dsn)
	answers, codes := burst(t, []string{a, b}, token, 50, 2, "0.1", nil)
	if codes[201] != 29 || codes[409] != 71 {
		t.Fatalf("statuses %v", codes)
	}
	checkAnswers(t, store, "activity", answers)
}

// kill -9 of the server during a burst, then a restart: the ledger is
// consistent and every answered release is in it with the answer sent.
func TestServerKilledDuringBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a server")
	}
	dsn := filepath.Join(t.TempDir(), "ledger.db")
	url, cmd := startServe(t, dsn, "--demo")
	store, token := releaseToken(t, dsn)
	warm, _ := burst(t, []string{url}, token, 1, 1, "0.001", nil) // the data is read once
	stop := make(chan struct{})
	time.AfterFunc(1500*time.Millisecond, func() {
		cmd.Process.Signal(syscall.SIGKILL)
		close(stop)
	})
	answers, codes := burst(t, []string{url}, token, 20, 1000, "0.001", stop)
	answers = append(answers, warm...)
	t.Logf("statuses before and at the kill: %v", codes)
	if len(answers) == 0 {
		t.Fatal("no release was answered before the kill")
	}
	url2, _ := startServe(t, dsn)
	checkAnswers(t, store, "activity", answers)
	more, codes2 := burst(t, []string{url2}, token, 2, 2, "0.001", nil)
	if codes2[201] != 4 {
		t.Fatalf("after the restart: %v", codes2)
	}
	checkAnswers(t, store, "activity", append(answers, more...))
}

// SIGTERM stops puff serve gracefully: exit status 0 after a log line.
func TestServeStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	_, cmd := startServe(t, filepath.Join(t.TempDir(), "l.db"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("puff serve did not stop on SIGTERM")
	}
}

// TestMain removes the puff binary built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if puffBin != "" {
		os.RemoveAll(filepath.Dir(puffBin))
	}
	os.Exit(code)
}

// SIGTERM while a release computes for minutes: the computation stops,
// the server exits with status 0 (before, shutdown waited 30 s for it and
// failed), and nothing is spent.
func TestServeStopsOnSIGTERMDuringASlowRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	dsn := filepath.Join(dir, "l.db")
	url, cmd := startServe(t, dsn, "--data-dir", dir, "--release-timeout", "0")
	store, err := ledger.Open(context.Background(), dsn, false)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin, _, err := store.CreateToken(context.Background(), []string{"admin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1, nil
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	registerSlow(t, do, dir)
	answered := make(chan int, 1)
	go func() {
		code, _ := do("POST", "/v1/datasets/slow/releases", `{"epsilon": 1}`)
		answered <- code
	}()
	time.Sleep(time.Second) // the release in flight (if not yet, SIGTERM comes first: the same outcome)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("puff serve did not stop on SIGTERM during a slow release")
	}
	if code := <-answered; code != -1 && code != 499 {
		t.Fatalf("the slow release was answered %d, want it stopped (499, or the connection closed)", code)
	}
	if es, _ := store.Entries(context.Background(), "slow"); len(es) != 0 {
		t.Fatal("a stopped release was recorded")
	}
}
