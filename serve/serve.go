// Package serve is the release service behind puff serve: several
// analysts ask for private statistics of datasets only the server reads,
// every answer is a release of package release, and every release is
// checked against and recorded in the durable ledger (package ledger)
// before it is answered, so the budget holds for everyone at once.
//
// The HTTP API lives under /v1 and is described by the OpenAPI document
// served at /v1/openapi.json (openapi.json; a test checks it against the
// routes). The web page at / is served from embedded files.
//
// Guarantees: the raw data and true counts never leave the server (only
// noisy results, the audit report and public metadata: sizes, the class,
// the ledger); a retried request with the same Idempotency-Key returns the
// recorded answer and never draws fresh noise (fresh noise on a retry could
// be averaged away); no request makes the server answer 500 for bad input.
package serve

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/release/commit"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

//go:embed openapi.json web
var files embed.FS

// MaxBody is the largest request body accepted (413 beyond).
const MaxBody = 1 << 20

// Config configures a Server.
type Config struct {
	Store ledger.Store
	// DataDir holds the datasets' data files: a registration names a path
	// inside it, and nothing outside it can be read (os.Root: no "..", no
	// absolute paths, no symbolic links leading out).
	DataDir string
	Logger  *slog.Logger // nil: discard
	Source  noise.Source // nil: crypto/rand (tests inject one)
	// Limits bound every release's size (release.Limits; zero: the
	// defaults), checked before any work: puff serve --max-windows,
	// --max-cells.
	Limits release.Limits
	// ReleaseTimeout stops a release's computation that runs longer (0:
	// none); a gone client stops it too. puff serve --release-timeout.
	ReleaseTimeout time.Duration
	// MaxAppendBytes bounds an append of readings (POST
	// /v1/streams/NAME/readings) after decompression: a gzip body's
	// decompressed bytes, a plain body's bytes (0: DefaultMaxAppendBytes;
	// 413 beyond, nothing appended). puff serve --max-append-bytes.
	MaxAppendBytes int64
	// MaxAppendReadings bounds the readings of one append (0:
	// DefaultMaxAppendReadings, at most stream.MaxRows; 413 beyond,
	// nothing appended). puff serve --max-append-readings.
	MaxAppendReadings int
}

// Server is the release service.
type Server struct {
	cfg    Config
	root   *os.Root
	mux    *http.ServeMux
	log    *slog.Logger
	mu     sync.Mutex
	loaded map[string]*dataset
	scales sync.Map // scaleKey → scaleAnswer
	sigmas *release.ScaleCache
}

// dataset is a registered dataset read into memory (once per process).
type dataset struct {
	once   sync.Once
	err    error
	data   *reading.Data
	class  *markov.Class
	fitted bool
	src    Source
}

// Source is how the server reads a dataset, stored in the ledger with
// the dataset (ledger.Registration.Source).
type Source struct {
	Data      string       `json:"data,omitempty"`    // path inside the data directory
	Builtin   string       `json:"builtin,omitempty"` // "activity": the built-in example
	Spec      reading.Spec `json:"spec"`
	Fit       bool         `json:"fit,omitempty"`
	Smoothing float64      `json:"smoothing,omitempty"`
	Sizes     Sizes        `json:"sizes"`
}

// Sizes are a dataset's public sizes (the same as every release report
// shows).
type Sizes struct {
	Series    int `json:"series"`
	Readings  int `json:"readings"`
	Missing   int `json:"missing"`
	MinLength int `json:"min_length"`
	MaxLength int `json:"max_length"`
}

// route is one API endpoint; routes is the list the mux and the OpenAPI
// test share.
type route struct {
	method, path string
	scope        func(r *http.Request) string // "" : public; "any": any live token
	handle       func(s *Server, w http.ResponseWriter, r *http.Request, tok *ledger.Token) error
}

var routes = []route{
	{"GET", "/v1/openapi.json", nil, (*Server).openAPI},
	{"GET", "/v1/token", any_, (*Server).whoami},
	{"POST", "/v1/datasets", fixed("admin"), (*Server).createDataset},
	{"GET", "/v1/datasets", any_, (*Server).listDatasets},
	{"GET", "/v1/datasets/{name}", on("read"), (*Server).getDataset},
	{"POST", "/v1/datasets/{name}/releases", on("release"), (*Server).createRelease},
	{"GET", "/v1/datasets/{name}/ledger", on("read"), (*Server).getLedger},
	{"GET", "/v1/scale", any_, (*Server).scale},
	{"POST", "/v1/streams/{name}/readings", on("feed"), (*Server).appendReadings},
	{"GET", "/v1/streams/{name}/windows", on("read"), (*Server).streamWindows},
}

func any_(*http.Request) string { return "any" }
func fixed(s string) func(*http.Request) string {
	return func(*http.Request) string { return s }
}
func on(kind string) func(*http.Request) string {
	return func(r *http.Request) string { return kind + ":" + r.PathValue("name") }
}

// New returns a server on cfg.Store.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("serve: no ledger")
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "."
	}
	root, err := os.OpenRoot(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("serve: data directory: %w", err)
	}
	// σ and the leakage bounds are kept in memory; the leakage bounds
	// (seconds to minutes on dense chains) also in the ledger's
	// calibration cache, so a restarted server, another server on the
	// same ledger and the CLI's releases into it compute a class's bound
	// at ε once (release/commit.Place uses the same cache)
	sigmas := release.NewScaleCache()
	if p, ok := cfg.Store.(release.Persister); ok {
		sigmas = release.NewPersistentCache(p)
	}
	s := &Server{cfg: cfg, root: root, mux: http.NewServeMux(), log: cfg.Logger, loaded: map[string]*dataset{}, sigmas: sigmas}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, rt := range routes {
		s.mux.Handle(rt.method+" "+rt.path, s.wrap(rt))
	}
	s.mux.HandleFunc("GET /{$}", s.page)
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(mustSub(files, "web/static"))))
	s.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", fmt.Sprintf("no endpoint %s %s (see /v1/openapi.json)", r.Method, r.URL.Path))
	})
	return s, nil
}

// Close releases the data directory.
func (s *Server) Close() error { return s.root.Close() }

// Handler is the server's HTTP handler, with structured request logs.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
				if !rec.wrote {
					writeError(rec, http.StatusInternalServerError, "", "internal error")
				}
			}
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "ms", time.Since(start).Milliseconds(), "token", rec.token)
		}()
		s.mux.ServeHTTP(rec, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	token  string // the token id (never the secret), for the log
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// apiError is an error with its HTTP status and the request field at
// fault.
type apiError struct {
	status int
	field  string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func bad(field, format string, a ...any) error {
	return &apiError{http.StatusBadRequest, field, fmt.Sprintf(format, a...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "internal error")
		return
	}
	writeRaw(w, status, b)
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
	w.Write([]byte("\n"))
}

func writeError(w http.ResponseWriter, status int, field, msg string) {
	body := map[string]any{"error": msg}
	if field != "" {
		body["field"] = field
	}
	b, _ := json.Marshal(body)
	writeRaw(w, status, b)
}

// wrap authenticates, checks the scope and turns errors into responses.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tok *ledger.Token
		if rt.scope != nil {
			h := r.Header.Get("Authorization")
			secret, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || secret == "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="puff"`)
				writeError(w, http.StatusUnauthorized, "", "missing bearer token (Authorization: Bearer puff_...)")
				return
			}
			t, err := s.cfg.Store.Authenticate(r.Context(), strings.TrimSpace(secret))
			if err != nil {
				if !errors.Is(err, ledger.ErrBadToken) {
					s.fail(w, r, err)
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="puff", error="invalid_token"`)
				writeError(w, http.StatusUnauthorized, "", "invalid or revoked token")
				return
			}
			tok = &t
			if rec, ok := w.(*statusRecorder); ok {
				rec.token = t.ID
			}
			if need := rt.scope(r); need != "any" && !t.Can(need) {
				writeError(w, http.StatusForbidden, "", fmt.Sprintf("this token lacks the scope %s", need))
				return
			}
		}
		limit := int64(MaxBody)
		if strings.HasSuffix(rt.path, "/readings") {
			limit = s.appendBytes() // on the wire too: never more than decompressed
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := rt.handle(s, w, r, tok); err != nil {
			s.fail(w, r, err)
		}
	})
}

// fail answers an error: the API's own with their status, the ledger's
// and the library's as client errors where they are, 500 only for the
// unexpected (logged).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var ref *ledger.Refused
	var mbe *http.MaxBytesError
	var fe *reading.FieldError
	var de *stream.DataError
	var re *stream.RowsError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.status, ae.field, ae.msg)
	case errors.As(err, &ref):
		writeJSON(w, http.StatusConflict, map[string]any{
			"error": ref.Error(), "dataset": ref.State.Dataset, "requested": ledger.Decimal(ref.Requested),
			"would_total": ledger.Decimal(ref.Would.Epsilon), "rule": ref.Would.Rule, "ledger": ref.State,
		})
	case errors.Is(err, ledger.ErrUnknown):
		writeError(w, http.StatusNotFound, "", err.Error())
	case errors.Is(err, ledger.ErrUnreadable):
		// the ledger's own metadata (class, budget, records), never data
		s.log.Error("unreadable dataset", "method", r.Method, "path", r.URL.Path, "err", err.Error())
		writeError(w, http.StatusInternalServerError, "", err.Error())
	case errors.Is(err, ledger.ErrExists):
		writeError(w, http.StatusConflict, "name", err.Error())
	case errors.Is(err, ledger.ErrKeyReused):
		writeError(w, http.StatusUnprocessableEntity, "Idempotency-Key", err.Error())
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("request body over %d bytes", mbe.Limit))
	case errors.As(err, &re):
		writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("more than %d readings in one request (%s; the server's limit, puff serve --max-append-readings): append them in parts; nothing was appended", re.Limit, re.At))
	case errors.As(err, &de):
		writeError(w, http.StatusBadRequest, "", de.Error())
	case errors.Is(err, compose.ErrNoRule):
		writeError(w, http.StatusConflict, "", err.Error())
	case errors.Is(err, ledger.ErrNoStream):
		writeError(w, http.StatusNotFound, "", err.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, err.Error())
	case errors.Is(err, context.Canceled):
		writeError(w, 499, "", "request cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusServiceUnavailable, "", fmt.Sprintf("the computation ran past the server's limit of %v (puff serve --release-timeout); nothing was spent", s.cfg.ReleaseTimeout))
	default:
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err.Error())
		writeError(w, http.StatusInternalServerError, "", "internal error")
	}
}

// decode reads a strict JSON body (unknown fields, duplicate keys and
// trailing data are 400s naming the line and column).
func decode(r *http.Request, v any) error {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return bad("", "empty body: want a JSON object")
	}
	if err := strictjson.Decode(raw, "body", v); err != nil {
		return bad(faultyField(raw, v, err), "%v", err)
	}
	return nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// faultyField names the field a decoding error is about, when one is.
func faultyField(raw []byte, v any, err error) string {
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	var ute *json.UnmarshalTypeError
	if errors.As(json.Unmarshal(raw, reflect.New(reflect.TypeOf(v).Elem()).Interface()), &ute) {
		return ute.Field
	}
	return ""
}

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ *ledger.Token) error {
	b, _ := files.ReadFile("openapi.json")
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
	return nil
}

func (s *Server) whoami(w http.ResponseWriter, _ *http.Request, tok *ledger.Token) error {
	out := map[string]any{"id": tok.ID, "scopes": tok.Scopes}
	if tok.Budget != nil {
		out["budget"] = json.Number(ledger.Decimal(tok.Budget))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// datasetRequest is POST /v1/datasets.
type datasetRequest struct {
	Name      string          `json:"name"`
	Data      string          `json:"data"`
	Builtin   string          `json:"builtin,omitempty"`
	Class     json.RawMessage `json:"class"`
	Budget    json.Number     `json:"budget"`
	Smoothing float64         `json:"smoothing,omitempty"`
	reading.Spec
}

func (s *Server) createDataset(w http.ResponseWriter, r *http.Request, tok *ledger.Token) error {
	var req datasetRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Name == "" {
		return bad("name", "name is required")
	}
	if err := ledger.ValidName(req.Name); err != nil {
		return bad("name", "%v", err) // before the data are read
	}
	budget, err := ledger.ParseBudget(req.Budget.String())
	if err != nil {
		return bad("budget", "%v", err)
	}
	src := Source{Data: req.Data, Builtin: req.Builtin, Spec: req.Spec, Smoothing: req.Smoothing}
	var class *markov.Class
	switch c := strings.TrimSpace(string(req.Class)); {
	case c == `"fit"`:
		src.Fit = true
	case c == "" || c == "null":
		return bad("class", `class is required: a class object (as in puff scale --class files) or "fit"`)
	default:
		if class, err = markov.ParseClass(strings.NewReader(c), "class"); err != nil {
			return bad("class", "%v", err)
		}
	}
	if !(req.Smoothing >= 0) || req.Smoothing > 1e6 {
		return bad("smoothing", "smoothing %v: want a number ≥ 0", req.Smoothing)
	}
	d, err := s.read(src, class)
	if err != nil {
		return err
	}
	src.Sizes = sizesOf(d.data)
	d.src.Sizes = src.Sizes
	srcJSON, err := json.Marshal(src)
	if err != nil {
		return err
	}
	if err := s.cfg.Store.Init(r.Context(), ledger.Registration{Name: req.Name, Budget: budget, Class: d.class, Source: srcJSON}); err != nil {
		var ne *ledger.NameError
		if errors.As(err, &ne) {
			return bad("name", "%v", err)
		}
		return err
	}
	s.mu.Lock()
	s.loaded[req.Name] = d
	s.mu.Unlock()
	st, err := s.cfg.Store.Dataset(r.Context(), req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.describe(r.Context(), st, d, nil, tok))
	return nil
}

// read opens and reads a dataset's data as puff release --data does.
func (s *Server) read(src Source, class *markov.Class) (*dataset, error) {
	opts, err := src.Spec.CSV()
	if err != nil {
		return nil, err
	}
	var rc io.ReadCloser
	name := src.Data
	switch {
	case src.Builtin == "activity" && src.Data == "":
		rc, name = io.NopCloser(release.ExampleData()), "example/activity.csv"
	case src.Builtin != "":
		return nil, bad("builtin", "builtin %q: the only built-in dataset is \"activity\"", src.Builtin)
	case src.Data == "":
		return nil, bad("data", "data is required: a path inside the server's data directory")
	default:
		f, err := s.root.Open(src.Data)
		if err != nil {
			return nil, bad("data", "data %q: %v (paths are relative to the server's data directory)", src.Data, unwrapPath(err))
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, bad("data", "data %q is not a regular file", src.Data)
		}
		rc = f
	}
	defer rc.Close()
	req := release.Request{CSV: opts, Class: class, Fit: src.Fit, Smoothing: src.Smoothing, Options: release.Options{Limits: s.cfg.Limits}}
	data, cl, err := release.Load(rc, name, req)
	var le *release.LimitError
	if errors.As(err, &le) {
		// refused before the data were read or a chain fitted
		return nil, bad(map[bool]string{true: "levels", false: "class"}[src.Spec.Levels != "" || src.Spec.Edges != ""], "%v", err)
	}
	if err != nil {
		return nil, bad("data", "%v", err)
	}
	d := &dataset{data: data, class: cl, fitted: src.Fit, src: src}
	d.once.Do(func() {})
	return d, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func sizesOf(d *reading.Data) Sizes {
	z := Sizes{Series: len(d.Seqs), Readings: d.Observations(), Missing: d.Missing()}
	for i, sq := range d.Seqs {
		if i == 0 || len(sq) < z.MinLength {
			z.MinLength = len(sq)
		}
		z.MaxLength = max(z.MaxLength, len(sq))
	}
	return z
}

// load returns a registered dataset, read once per process.
func (s *Server) load(ctx context.Context, name string) (*dataset, error) {
	s.mu.Lock()
	d, ok := s.loaded[name]
	if !ok {
		d = &dataset{}
		s.loaded[name] = d
	}
	s.mu.Unlock()
	d.once.Do(func() {
		reg, err := s.cfg.Store.Definition(ctx, name)
		if err != nil {
			d.err = err
			return
		}
		var src Source
		if err := json.Unmarshal(reg.Source, &src); err != nil || len(reg.Source) == 0 {
			d.err = fmt.Errorf("dataset %q was registered without a data source (puff ledger init): the service cannot release it", name)
			return
		}
		// the class fitted at registration is the dataset's class Θ
		fitted := src.Fit
		src.Fit = false
		nd, err := s.read(src, reg.Class)
		if err != nil {
			d.err = err
			return
		}
		d.data, d.class, d.src, d.fitted = nd.data, nd.class, src, fitted
	})
	if d.err != nil {
		s.mu.Lock()
		if s.loaded[name] == d {
			delete(s.loaded, name) // retry on the next request
		}
		s.mu.Unlock()
		var ae *apiError
		if errors.As(d.err, &ae) {
			// the reason quotes the data file (its lines, times, values):
			// private, so the operator's log has it and the caller does not
			s.log.Error("dataset unreadable", "dataset", name, "err", ae.msg)
			return nil, &apiError{http.StatusInternalServerError, "", fmt.Sprintf("dataset %q: its data can no longer be read (the server's log says why)", name)}
		}
		return nil, d.err
	}
	return d, nil
}

// datasetView is a dataset as the API shows it: never raw data or counts.
type datasetView struct {
	Name string `json:"name"`
	// Error marks a dataset whose ledger entry cannot be read (listed
	// with the others, never hiding them); the rest is then absent.
	Error  string                `json:"error,omitempty"`
	Ledger ledger.State          `json:"ledger"`
	Class  *release.ClassSummary `json:"class,omitempty"`
	Sizes  *Sizes                `json:"sizes,omitempty"`
	// May is what the asking token may do with the dataset: "read",
	// "release", "feed" (the page disables what it may not).
	May []string `json:"may,omitempty"`
	// DataError says why the service cannot release the dataset now: its
	// data cannot be read (the server's log says why: never a word of
	// the data here), or it has no data source (puff ledger init).
	DataError string `json:"data_error,omitempty"`
}

// mayDo is what tok may do with dataset name.
func mayDo(tok *ledger.Token, name string) []string {
	var out []string
	for _, k := range []string{"read", "release", "feed"} {
		if tok != nil && tok.Can(k+":"+name) {
			out = append(out, k)
		}
	}
	return out
}

// describe is the dataset's view for tok; d is the dataset as loaded, or
// nil with the reason loadErr.
func (s *Server) describe(ctx context.Context, st ledger.State, d *dataset, loadErr error, tok *ledger.Token) datasetView {
	v := datasetView{Name: st.Dataset, Ledger: st, May: mayDo(tok, st.Dataset)}
	if d != nil && d.class != nil {
		v.Class = release.Summarize(d.class, d.fitted)
		z := d.src.Sizes // computed once, at registration
		v.Sizes = &z
		return v
	}
	if class, _ := s.streamClass(ctx, st.Dataset); class != nil {
		v.Class = release.Summarize(class, false) // the stream's: it has no data source
		return v
	}
	// no data to read: the class is the ledger's (nil until a release
	// sets it), and the view says why nothing can be released
	reg, err := s.cfg.Store.Definition(ctx, st.Dataset)
	if err != nil {
		return v
	}
	var src Source
	hasSource := len(reg.Source) > 0 && json.Unmarshal(reg.Source, &src) == nil
	if reg.Class != nil {
		v.Class = release.Summarize(reg.Class, src.Fit)
	}
	switch {
	case !hasSource:
		v.DataError = "no data source: registered with puff ledger init, so the service cannot release it"
	case loadErr != nil:
		v.DataError = "its data can no longer be read (the server's log says why)"
		z := src.Sizes
		v.Sizes = &z
	}
	return v
}

func (s *Server) listDatasets(w http.ResponseWriter, r *http.Request, tok *ledger.Token) error {
	sts, err := s.cfg.Store.Datasets(r.Context())
	if err != nil {
		return err
	}
	out := []datasetView{}
	for _, st := range sts {
		if !tok.Can("read:" + st.Dataset) {
			continue
		}
		if st.Err != nil {
			// one unreadable dataset never hides the others; its error
			// comes from the ledger's own metadata, never from the data
			s.log.Error("unreadable dataset", "dataset", st.Dataset, "err", st.Err.Error())
			out = append(out, datasetView{Name: st.Dataset, Error: st.Err.Error(), Ledger: st})
			continue
		}
		d, err := s.load(r.Context(), st.Dataset)
		out = append(out, s.describe(r.Context(), st, d, err, tok))
	}
	writeJSON(w, http.StatusOK, map[string]any{"datasets": out})
	return nil
}

func (s *Server) getDataset(w http.ResponseWriter, r *http.Request, tok *ledger.Token) error {
	name := r.PathValue("name")
	st, err := s.cfg.Store.Dataset(r.Context(), name)
	if err != nil {
		return err
	}
	d, err := s.load(r.Context(), name)
	writeJSON(w, http.StatusOK, s.describe(r.Context(), st, d, err, tok))
	return nil
}

// releaseRequest is POST /v1/datasets/{name}/releases: puff release's
// options.
type releaseRequest struct {
	Method  string          `json:"method"`
	Epsilon json.RawMessage `json:"epsilon"`
	Query   string          `json:"query,omitempty"`
	Window  string          `json:"window,omitempty"`
	Profile string          `json:"profile,omitempty"` // hour-of-day, day-of-week or week-hour (docs/math.md §4.15)
}

// parseEpsilon reads ε as every command does (package epsilon: a JSON
// number, or a string holding a decimal, a fraction or ln(r)).
func parseEpsilon(raw json.RawMessage) (float64, error) {
	e, err := parseExactEpsilon(raw)
	return e.Value, err
}

// parseExactEpsilon is parseEpsilon keeping ε as written (its exact
// rational goes to the ledger record).
func parseExactEpsilon(raw json.RawMessage) (epsilon.Epsilon, error) {
	e, err := epsilon.ParseJSON(raw)
	if err != nil {
		return e, bad("epsilon", "%v", err)
	}
	return e, nil
}

// canonicalEpsilon is ε's exact value as JSON, the same for every way of
// writing it: a rational with a short decimal expansion as that decimal
// (a JSON number: 0.1, 2), another as the string "p/q", ln(r) as the
// string "ln(r)" with r in lowest terms.
func canonicalEpsilon(e epsilon.Epsilon) json.RawMessage {
	var b []byte
	switch {
	case e.Rat != nil:
		if n, exact := e.Rat.FloatPrec(); exact && n <= 30 {
			return json.RawMessage(e.Rat.FloatString(n))
		}
		b, _ = json.Marshal(e.Rat.RatString())
	default:
		b, _ = json.Marshal("ln(" + e.Lo.RatString() + ")")
	}
	return b
}

// epsilonParam is a query parameter's ε as JSON: a string, so the same
// text is read as in a body ("" : missing).
func epsilonParam(v string) json.RawMessage {
	if v == "" {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

func (s *Server) createRelease(w http.ResponseWriter, r *http.Request, tok *ledger.Token) error {
	name := r.PathValue("name")
	var req releaseRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	exact, err := parseExactEpsilon(req.Epsilon)
	eps := exact.Value
	if err != nil {
		return err
	}
	if req.Method == "" {
		req.Method = string(mechanism.Exact)
	}
	method, err := mechanism.Parse(req.Method)
	if err != nil || !isReleaseMethod(method) {
		return bad("method", "method %q: want one of %v", req.Method, mechanism.Release)
	}
	if _, err := release.ParseQuery(req.Query); err != nil {
		return bad("query", "%v", err)
	}
	var width time.Duration
	if req.Window != "" {
		if width, err = time.ParseDuration(req.Window); err != nil || width < time.Second {
			return bad("window", "window %q: want a duration of at least 1s such as 24h", req.Window)
		}
	}
	if req.Profile != "" {
		if _, err := query.ParseProfile(req.Profile); err != nil {
			return bad("profile", "%v", err)
		}
		if req.Window != "" {
			return bad("profile", "give a window or a profile, not both")
		}
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 255 {
		return bad("Idempotency-Key", "Idempotency-Key longer than 255 characters")
	}
	d, err := s.load(r.Context(), name)
	if err != nil {
		return err
	}
	// the request as the ledger compares it: ε by its exact value, so
	// "0.1", 0.1 and "1/10" under one Idempotency-Key are one request
	req.Epsilon = canonicalEpsilon(exact)
	canon, _ := json.Marshal(req)
	h := sha256.Sum256(append([]byte(name+"\x00"), canon...))
	p, err := s.prepare(r.Context(), d, release.Options{Epsilon: eps, EpsilonRat: exact.Rat, Method: method, Query: req.Query, Profile: req.Profile, Source: s.cfg.Source, Cache: s.sigmas}, width)
	if err != nil {
		return err
	}
	res, err := commit.Release(r.Context(), p, commit.Target{Store: s.cfg.Store, Spend: ledger.Spend{Dataset: name, Token: tok.ID, TokenBudget: tok.Budget,
		IdempotencyKey: key, RequestHash: hex.EncodeToString(h[:])}})
	if err != nil {
		return err
	}
	rc := res.Receipt
	// recorded: from here on nothing fails the answer
	body := strictjson.AddField(strictjson.AddField(rc.Result, "ledger", s.withPricing(r.Context(), rc.State, nil, rc.ID)), "id", rc.ID)
	if rc.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, http.StatusCreated, body)
	return nil
}

func (d *dataset) locOrUTC() *time.Location {
	if o, err := d.src.Spec.CSV(); err == nil && o.Location != nil {
		return o.Location
	}
	return time.UTC
}

func isReleaseMethod(m mechanism.Name) bool {
	for _, r := range mechanism.Release {
		if r == m {
			return true
		}
	}
	return false
}

func (s *Server) getLedger(w http.ResponseWriter, r *http.Request, _ *ledger.Token) error {
	name := r.PathValue("name")
	st, err := s.cfg.Store.Dataset(r.Context(), name)
	if err != nil {
		return err
	}
	es, err := s.cfg.Store.Entries(r.Context(), name)
	if err != nil {
		return err
	}
	rs := []ledger.Brief{}
	for _, e := range es {
		rs = append(rs, e.Brief(true))
	}
	body := strictjson.AddField(s.withPricing(r.Context(), st, es, 0), "releases", rs)
	writeRaw(w, http.StatusOK, body)
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// scaleKey caches planner answers: σ depends only on the class, ε, the
// length, the start, the method and whether the leakage bound is a
// stream's (every length).
type scaleKey struct {
	class, eps, method string
	length, start      int
	stream             bool
}

// scaleAnswer is the planner's answer: sigma, per_bin_scale and
// expected_l1_error are the scale a release with these parameters draws
// its noise with (release.PlanScale: the smaller of the Markov Quilt
// Mechanism's σ and the temporal leakage bound's), mqm_sigma and
// leakage_sigma the two bounds, used which of them set it and
// calibration the release's own account of why.
type scaleAnswer struct {
	Dataset         string   `json:"dataset"`
	Method          string   `json:"method"`
	Epsilon         float64  `json:"epsilon"`
	Length          int      `json:"length"`
	Applicable      bool     `json:"applicable"`
	Sigma           *float64 `json:"sigma"`
	PerBinScale     *float64 `json:"per_bin_scale"`     // counts: σ·2
	ExpectedL1Error *float64 `json:"expected_l1_error"` // counts: k bins × per-bin scale
	Guarantee       string   `json:"guarantee"`
	// MQMSigma is the Markov Quilt Mechanism's σ (exact and approx; nil
	// for another method, whose σ is sigma); LeakageSigma the temporal leakage bound's (nil:
	// not computed, for the reason in calibration.why, or a method other
	// than MQM), LeakageBound which leakage bound gave it.
	MQMSigma     *float64 `json:"mqm_sigma"`
	LeakageSigma *float64 `json:"leakage_sigma"`
	LeakageBound string   `json:"leakage_bound,omitempty"`
	// Used is the bound that set sigma: "mqm", "tpl" (the leakage bound)
	// or another method's name; "" when the method does not apply.
	Used        string               `json:"used"`
	Stream      bool                 `json:"stream,omitempty"` // the leakage bound for every length, as a stream's windows
	Calibration *release.Calibration `json:"calibration,omitempty"`
}

// maxPlanLength bounds a planning query's length (the σ search is
// T-independent past the mixing horizon, but a length is still parsed).
const maxPlanLength = 1 << 40

func (s *Server) scale(w http.ResponseWriter, r *http.Request, tok *ledger.Token) error {
	q := r.URL.Query()
	name := q.Get("dataset")
	if name == "" {
		return bad("dataset", "dataset is required: σ is computed for its class")
	}
	if !tok.Can("read:" + name) {
		return &apiError{http.StatusForbidden, "dataset", "this token lacks the scope read:" + name}
	}
	eps, err := parseEpsilon(epsilonParam(q.Get("epsilon")))
	if err != nil {
		return err
	}
	method, err := mechanism.Parse(q.Get("method"))
	if q.Get("method") == "" {
		method, err = mechanism.Exact, nil
	}
	if err != nil || !isReleaseMethod(method) {
		return bad("method", "method %q: want one of %v", q.Get("method"), mechanism.Release)
	}
	var class *markov.Class
	T, stream := 0, false
	if d, err := s.load(r.Context(), name); err == nil {
		class, T = d.class, d.src.Sizes.MaxLength
	} else if class, T = s.streamClass(r.Context(), name); class == nil {
		return err // neither data nor a stream
	} else {
		// a stream's class, at the length where its σ reaches the
		// supremum, calibrated as its windows are: for every start and,
		// the leakage bound, every length (stream.DeclareWithLimits)
		class, stream = class.AnyStart(), true
	}
	if l := q.Get("length"); l != "" {
		if T, err = strconv.Atoi(l); err != nil || T < 1 || T > maxPlanLength {
			return bad("length", "length %q: want an integer ≥ 1", l)
		}
	}
	key := scaleKey{class.Hash(), strconv.FormatFloat(eps, 'g', -1, 64), string(method), T, 1, stream}
	if v, ok := s.scales.Load(key); ok {
		a := v.(scaleAnswer)
		a.Dataset = name
		writeJSON(w, http.StatusOK, a)
		return nil
	}
	if err := s.cfg.Limits.CheckStates(len(class.States)); err != nil {
		return bad("dataset", "%v", err)
	}
	ctx, cancel := s.computing(r.Context())
	defer cancel()
	// the release's own calibration (package release), sharing the
	// releases' cache of σ and leakage bounds
	rep, err := release.PlanScale(ctx, class, T, eps, method, s.cfg.Limits, s.sigmas, stream)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if err != nil {
		return bad("", "%v", err)
	}
	sc := rep.Scales[0]
	a := scaleAnswer{Method: string(method), Epsilon: eps, Length: T, Applicable: sc.Applicable, Guarantee: rep.Guarantee, Stream: stream}
	if c := rep.Calibration; sc.Applicable && sc.Sigma != nil && c != nil {
		f := func(v float64) *float64 { return &v }
		used := release.UsedSigma(rep)
		b := noise.ScaleFor(used, 2)
		l1 := b * float64(len(class.States))
		a.Sigma, a.PerBinScale, a.ExpectedL1Error = f(used), &b, &l1
		a.Used, a.Calibration = c.Method, c
		if method.MQM() {
			a.MQMSigma = f(c.MQM)
		}
		if c.TPL > 0 {
			a.LeakageSigma, a.LeakageBound = f(c.TPL), c.TPLBound
		}
	}
	s.scales.Store(key, a)
	a.Dataset = name
	writeJSON(w, http.StatusOK, a)
	return nil
}

var pageTemplate = template.Must(template.ParseFS(files, "web/index.html"))

// page serves the web page: html/template over embedded files, scripts
// and styles only from this server (no external network at run time).
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:")
	if err := pageTemplate.Execute(w, struct{ Title string }{"pufferfish release service"}); err != nil {
		s.log.Error("page", "err", err.Error())
	}
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// Demo registers the built-in example as dataset "activity" (its class,
// budget 3) unless it exists, and creates an admin token, printed on w,
// when the ledger has none: puff serve --demo.
func (s *Server) Demo(ctx context.Context, w io.Writer) error {
	if _, err := s.cfg.Store.Dataset(ctx, "activity"); errors.Is(err, ledger.ErrUnknown) {
		class, err := markov.ParseClass(release.ExampleClass(), "example/activity_class.json")
		if err != nil {
			return err
		}
		src := Source{Builtin: "activity"}
		d, err := s.read(src, class)
		if err != nil {
			return err
		}
		src.Sizes = sizesOf(d.data)
		b, _ := json.Marshal(src)
		if err := s.cfg.Store.Init(ctx, ledger.Registration{Name: "activity", Budget: big.NewRat(3, 1), Class: class, Source: b}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	ts, err := s.cfg.Store.Tokens(ctx)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		secret, _, err := s.cfg.Store.CreateToken(ctx, []string{"admin"}, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "admin token (shown once): %s\n", secret)
	}
	return nil
}
