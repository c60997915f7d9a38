// Package collect fetches a class's notebooks from a JupyterHub for
// grading (`coalesce collect`), through the hub's REST API with a service
// token: it lists the hub's users, starts the server of a learner whose
// server is stopped (an idle culler stops most of them by grading time)
// and stops it again afterwards, reads ~/course/notebooks through that
// server's contents API into OUT/LEARNER/, one folder per learner as
// `coalesce grade` reads them, and writes the roster from the hub's user
// list, so that a learner who saved nothing is still on it.
//
// The token needs the scopes list:users, read:users:name, read:servers
// (to list the users and see their servers), servers (to start and stop
// them) and access:servers (to read their files); docs/running.md has the
// hub configuration.
//
// A learner's files are written whole or not at all (package
// internal/atomicfile), with the modification time the server reports, so
// that a second run skips what it already has (same size and time) and an
// interrupted run resumes. A notebook that is no longer on the server is
// removed from OUT/LEARNER/ when this package wrote it (the folder's
// .collected.json lists those); nothing else there is touched. Every
// response is read with a bound (Options.MaxBytes for a file, MaxListBytes
// for a listing), every request has a deadline, and an error names the
// learner, the request and the HTTP status. One learner's failure does
// not stop the others.
package collect

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coalescing-course/coalesce/internal/atomicfile"
)

// Defaults of Options.
const (
	// DefaultFolder is where the course keeps a learner's notebooks, from
	// their server's root: ~/course, the notebookDir of docs/running.md
	// (scripts/course_home.sh). A server whose root is the home has them
	// at course/notebooks, which is tried next when Folder is "".
	DefaultFolder = "notebooks"
	// DefaultMaxBytes bounds one notebook, as coalesce grade's -max-size.
	DefaultMaxBytes = 256 << 20
	// MaxListBytes bounds a listing (users, a folder).
	MaxListBytes = 16 << 20
	// DefaultMaxFiles bounds the notebooks collected per learner.
	DefaultMaxFiles = 1000
	// DefaultRequestTimeout bounds one request.
	DefaultRequestTimeout = 2 * time.Minute
	// DefaultStartTimeout bounds waiting for a server to start.
	DefaultStartTimeout = 5 * time.Minute
	// DefaultParallel is how many learners are collected at once.
	DefaultParallel = 4
	// Manifest is the file in OUT/LEARNER/ listing what was collected.
	Manifest = ".collected.json"
	// maxDepth bounds how deep the folder is walked below Folder.
	maxDepth = 4
)

// Options says where to collect from and how.
type Options struct {
	// Hub is the hub's public URL (https://hub.example.edu/); the API is
	// below it at hub/api/.
	Hub string
	// Token is the service token (never printed).
	Token string
	// Out is the submissions folder: OUT/LEARNER/NAME.ipynb.
	Out string
	// Folder is the path below each server's root to collect; "" is
	// DefaultFolder, else course/notebooks (a server rooted at the home).
	Folder string
	// Users limits the collection to these hub users; nil is every user
	// but the hub's admins unless Admins.
	Users []string
	// Admins includes the hub's admin users (instructors, usually).
	Admins bool
	// NoStart leaves stopped servers stopped: their learners are listed
	// as not collected.
	NoStart bool
	// MaxBytes, MaxFiles, RequestTimeout, StartTimeout, Parallel: 0 is the default.
	MaxBytes       int64
	MaxFiles       int
	RequestTimeout time.Duration
	StartTimeout   time.Duration
	Parallel       int
	// Client makes the requests; nil is a client that follows no redirect
	// (a redirect means a server that is not there).
	Client *http.Client
	// Log receives a line per learner and server started or stopped; nil discards.
	Log io.Writer
}

// Learner is what was collected of one hub user.
type Learner struct {
	Name string
	// Files are the notebooks now in OUT/Name, relative to it; Fetched
	// those downloaded by this run (the others were already there).
	Files, Fetched []string
	// Removed are notebooks an earlier run collected that the server no
	// longer has.
	Removed []string
	// Started is true when this run started the learner's server (and
	// stopped it again).
	Started bool
	// Err is why the learner's notebooks are not (all) there; nil when they are.
	Err error
}

// Result is a collection: every learner of the hub (or of Options.Users).
type Result struct {
	Learners []Learner
}

// Failed returns the learners with an error.
func (r *Result) Failed() []Learner {
	var out []Learner
	for _, l := range r.Learners {
		if l.Err != nil {
			out = append(out, l)
		}
	}
	return out
}

// Roster returns the learners' names, one a line, as gradebook.ReadRoster
// reads them, headed by a comment saying where they came from.
func (r *Result) Roster(hub string, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# the users of %s, %s (coalesce collect)\n", hub, now.UTC().Format(time.RFC3339))
	for _, l := range r.Learners {
		b.WriteString(l.Name + "\n")
	}
	return b.String()
}

// HTTPError is a request the hub or a learner's server refused.
type HTTPError struct {
	Method, URL string
	Status      int
	// Body is the start of the response, for the reason.
	Body string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	switch e.Status {
	case http.StatusUnauthorized:
		msg += " (the token is not valid for this hub)"
	case http.StatusForbidden:
		msg += " (the token lacks a scope: it needs list:users, read:users:name, read:servers, servers, access:servers)"
	}
	return msg
}

// ErrTooLarge is wrapped by the error of a response over its bound.
var ErrTooLarge = errors.New("collect: response too large")

// Collect fetches every learner's notebooks into o.Out and returns what it
// did per learner. Its error is for what stops the whole collection (the
// user list cannot be read, OUT cannot be made); a learner's failure is
// their Learner.Err.
func Collect(ctx context.Context, o Options) (*Result, error) {
	c, err := newClient(o)
	if err != nil {
		return nil, err
	}
	users, err := c.users(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("collect: %w", err)
	}
	var pick []hubUser
	if o.Users != nil {
		byName := map[string]hubUser{}
		for _, u := range users {
			byName[u.Name] = u
		}
		for _, name := range o.Users {
			u, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("collect: %s is not a user of %s (it has %d: %s)", name, c.hub, len(users), strings.Join(firstNames(users, 10), ", "))
			}
			pick = append(pick, u)
		}
	} else {
		for _, u := range users {
			if u.Kind != "" && u.Kind != "user" || u.Admin && !o.Admins {
				continue
			}
			pick = append(pick, u)
		}
	}
	res := &Result{Learners: make([]Learner, len(pick))}
	work := make(chan int)
	var wg sync.WaitGroup
	for range c.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res.Learners[i] = c.learner(ctx, pick[i])
			}
		}()
	}
	for i := range pick {
		work <- i
	}
	close(work)
	wg.Wait()
	return res, ctx.Err()
}

func firstNames(users []hubUser, n int) []string {
	var out []string
	for i, u := range users {
		if i == n {
			out = append(out, fmt.Sprintf("… %d more", len(users)-n))
			break
		}
		out = append(out, u.Name)
	}
	return out
}

type client struct {
	Options
	folders  []string // the folders tried, in order: the first that lists
	hub      *url.URL
	http     *http.Client
	parallel int
	logMu    sync.Mutex
}

func newClient(o Options) (*client, error) {
	if o.Hub == "" {
		return nil, errors.New("collect: no hub URL: want the hub's address, e.g. https://hub.example.edu/")
	}
	u, err := url.Parse(o.Hub)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("collect: hub URL %q: want http(s)://HOST[/PREFIX/]", o.Hub)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	// A URL the instructor copied from the browser may end in hub/ or
	// hub/api/: the API is always below the base.
	for _, tail := range []string{"hub/api/", "hub/"} {
		u.Path = strings.TrimSuffix(u.Path, tail)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	if strings.TrimSpace(o.Token) == "" {
		return nil, errors.New("collect: no token: give -token-file FILE or set JUPYTERHUB_API_TOKEN (a service token, docs/running.md)")
	}
	if o.Out == "" {
		return nil, errors.New("collect: no output folder")
	}
	c := &client{Options: o, hub: u}
	c.Token = strings.TrimSpace(o.Token)
	c.folders = []string{DefaultFolder, "course/notebooks"}
	if c.Folder != "" {
		c.folders = []string{strings.Trim(path.Clean("/"+c.Folder), "/")}
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxFiles <= 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	c.parallel = o.Parallel
	if c.parallel <= 0 {
		c.parallel = DefaultParallel
	}
	c.http = o.Client
	if c.http == nil {
		c.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c, nil
}

func (c *client) logf(format string, args ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	fmt.Fprintf(c.Log, format+"\n", args...)
}

// url returns the hub's URL for p, a path below the base ("hub/api/users").
func (c *client) url(p string, q url.Values) string {
	return c.abs(c.hub.Path+p, q)
}

// abs returns the URL of the absolute path p on the hub's host (a server's
// URL in the user model is absolute: /PREFIX/user/NAME/).
func (c *client) abs(p string, q url.Values) string {
	u := *c.hub
	u.Path = p
	u.RawPath = escapePath(p)
	u.RawQuery = q.Encode()
	return u.String()
}

// escapePath escapes each segment of p.
func escapePath(p string) string {
	seg := strings.Split(p, "/")
	for i, s := range seg {
		seg[i] = url.PathEscape(s)
	}
	return strings.Join(seg, "/")
}

// do sends a request and returns the response's body, at most limit bytes,
// or an *HTTPError for a status other than the wanted ones.
func (c *client) do(ctx context.Context, method, u string, limit int64, want ...int) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "token "+c.Token)
	req.Header.Set("Accept", "application/jupyterhub-pagination+json, application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("%s %s: reading the response: %w", method, u, err)
	}
	if !slices.Contains(want, resp.StatusCode) {
		return nil, resp.StatusCode, &HTTPError{Method: method, URL: u, Status: resp.StatusCode, Body: excerpt(body, resp.Header.Get("Location"))}
	}
	if int64(len(body)) > limit {
		return nil, resp.StatusCode, fmt.Errorf("%s %s: %w: over %d bytes", method, u, ErrTooLarge, limit)
	}
	return body, resp.StatusCode, nil
}

// excerpt is the reason in an error response: JupyterHub's and Jupyter
// server's {"message": ...}, else the start of the text.
func excerpt(body []byte, location string) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) == nil && m.Message != "" {
		return m.Message
	}
	if location != "" {
		return "redirected to " + location + " (no server there?)"
	}
	s := strings.TrimSpace(string(body))
	if !utf8.ValidString(s) || strings.HasPrefix(s, "<") {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// hubUser is what the collection needs of JupyterHub's user model.
type hubUser struct {
	Name    string               `json:"name"`
	Kind    string               `json:"kind"`
	Admin   bool                 `json:"admin"`
	Servers map[string]hubServer `json:"servers"`
}

type hubServer struct {
	Ready       bool   `json:"ready"`
	Pending     string `json:"pending"`
	URL         string `json:"url"`
	ProgressURL string `json:"progress_url"`
}

// users lists the hub's users, a page at a time (JupyterHub's pagination).
func (c *client) users(ctx context.Context) ([]hubUser, error) {
	var all []hubUser
	for offset := 0; ; {
		body, _, err := c.do(ctx, http.MethodGet, c.url("hub/api/users", url.Values{"offset": {fmt.Sprint(offset)}, "limit": {"200"}}), MaxListBytes, http.StatusOK)
		if err != nil {
			return nil, fmt.Errorf("collect: listing the hub's users: %w", err)
		}
		var page struct {
			Items      []hubUser `json:"items"`
			Pagination struct {
				Next *struct {
					Offset int `json:"offset"`
				} `json:"next"`
			} `json:"_pagination"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			// A hub before pagination (JupyterHub < 2) answers a plain list.
			if err := json.Unmarshal(body, &all); err != nil {
				return nil, fmt.Errorf("collect: the hub's user list is not JupyterHub's JSON: %w", err)
			}
			break
		}
		all = append(all, page.Items...)
		if page.Pagination.Next == nil || page.Pagination.Next.Offset <= offset {
			break
		}
		offset = page.Pagination.Next.Offset
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all, nil
}

// folderName says why a hub user name cannot be a folder of OUT, "" when it can.
func folderName(name string) string {
	switch {
	case name == "", name == ".", name == "..":
		return "an empty or dot name"
	case strings.HasPrefix(name, "."):
		return "a name starting with a dot, which coalesce grade would skip"
	case strings.ContainsAny(name, "/\\\x00"):
		return "a name with a slash or NUL"
	case !utf8.ValidString(name):
		return "a name that is not UTF-8"
	}
	return ""
}

// learner collects one user's notebooks.
func (c *client) learner(ctx context.Context, u hubUser) (l Learner) {
	l.Name = u.Name
	wrap := func(err error) error { return fmt.Errorf("collect: %s: %w", u.Name, err) }
	if why := folderName(u.Name); why != "" {
		l.Err = wrap(fmt.Errorf("cannot be a folder of %s: %s", c.Out, why))
		return l
	}
	srv, started, err := c.server(ctx, u)
	l.Started = started
	if started {
		defer func() {
			if err := c.stop(context.WithoutCancel(ctx), u.Name); err != nil {
				c.logf("%s: stopping the server this run started: %v", u.Name, err)
				if l.Err == nil {
					l.Err = wrap(fmt.Errorf("stopping the server this run started: %w", err))
				}
			} else {
				c.logf("%s: stopped the server this run started", u.Name)
			}
		}()
	}
	if err != nil {
		l.Err = wrap(err)
		c.logf("%s: not collected: %v", u.Name, err)
		return l
	}
	if err := c.files(ctx, &l, srv); err != nil {
		l.Err = wrap(err)
		c.logf("%s: %d notebook(s), then: %v", u.Name, len(l.Files), err)
		return l
	}
	c.logf("%s: %d notebook(s), %d fetched, %d removed", u.Name, len(l.Files), len(l.Fetched), len(l.Removed))
	return l
}

// server returns the URL path of u's running server, starting it when it is
// stopped (started reports that).
func (c *client) server(ctx context.Context, u hubUser) (srvURL string, started bool, err error) {
	s, ok := u.Servers[""]
	if ok && s.Ready && s.URL != "" {
		return s.URL, false, nil
	}
	if !ok {
		if c.NoStart {
			return "", false, errors.New("the server is stopped (-no-start): not collected")
		}
		_, _, err := c.do(ctx, http.MethodPost, c.url("hub/api/users/"+u.Name+"/server", nil), MaxListBytes, http.StatusCreated, http.StatusAccepted)
		if err != nil {
			var he *HTTPError
			// 400: it started meanwhile; anything else is the reason.
			if !errors.As(err, &he) || he.Status != http.StatusBadRequest {
				return "", false, fmt.Errorf("starting the server: %w", err)
			}
		} else {
			started = true
			c.logf("%s: starting the server", u.Name)
		}
	}
	if err := c.wait(ctx, u.Name); err != nil {
		return "", started, err
	}
	body, _, err := c.do(ctx, http.MethodGet, c.url("hub/api/users/"+u.Name, nil), MaxListBytes, http.StatusOK)
	if err != nil {
		return "", started, fmt.Errorf("reading the user after the start: %w", err)
	}
	var now hubUser
	if err := json.Unmarshal(body, &now); err != nil {
		return "", started, fmt.Errorf("the user model is not JupyterHub's JSON: %w", err)
	}
	s, ok = now.Servers[""]
	if !ok || !s.Ready || s.URL == "" {
		return "", started, fmt.Errorf("the server is not ready after its start (pending %q)", s.Pending)
	}
	return s.URL, started, nil
}

// wait follows the hub's progress stream of name's server until it is
// ready, has failed, or StartTimeout passes.
func (c *client) wait(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, c.StartTimeout)
	defer cancel()
	u := c.url("hub/api/users/"+name+"/server/progress", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+c.Token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the server did not start within %s", c.StartTimeout)
		}
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("waiting for the server: %w", &HTTPError{Method: http.MethodGet, URL: u, Status: resp.StatusCode, Body: excerpt(body, "")})
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	last := ""
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Ready   bool   `json:"ready"`
			Failed  bool   `json:"failed"`
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &ev) != nil {
			continue
		}
		last = ev.Message
		switch {
		case ev.Failed:
			return fmt.Errorf("the server failed to start: %s", ev.Message)
		case ev.Ready:
			return nil
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the server did not start within %s (last: %q)", c.StartTimeout, last)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the progress of the server's start: %w", err)
	}
	// The stream ends without an event when the server was ready already.
	return nil
}

// stop stops name's server and waits (within RequestTimeout) until it is gone.
func (c *client) stop(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, http.MethodDelete, c.url("hub/api/users/"+name+"/server", nil), MaxListBytes, http.StatusNoContent, http.StatusAccepted)
	return err
}

// entry is a Jupyter contents model, what the collection reads of it.
type entry struct {
	Name         string          `json:"name"`
	Path         string          `json:"path"`
	Type         string          `json:"type"`
	Size         *int64          `json:"size"`
	LastModified time.Time       `json:"last_modified"`
	Content      json.RawMessage `json:"content"`
	Format       string          `json:"format"`
}

// manifest is OUT/LEARNER/.collected.json: the files this package wrote
// there, with the server's size and time of each.
type manifest struct {
	Hub   string              `json:"hub"`
	Files map[string]fileMeta `json:"files"`
}

type fileMeta struct {
	Size         int64     `json:"size"`
	LastModified time.Time `json:"last_modified"`
}

// files copies the notebooks of the learner's server at srv (a URL path,
// /user/NAME/) into OUT/NAME.
func (c *client) files(ctx context.Context, l *Learner, srv string) error {
	dir := filepath.Join(c.Out, l.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var man manifest
	if b, err := os.ReadFile(filepath.Join(dir, Manifest)); err == nil {
		_ = json.Unmarshal(b, &man) // a broken manifest only costs downloads
	}
	if man.Files == nil {
		man.Files = map[string]fileMeta{}
	}
	saveMan := func() error {
		man.Hub = c.hub.String()
		b, err := json.MarshalIndent(man, "", " ")
		if err != nil {
			return err
		}
		return atomicfile.WriteBytes(filepath.Join(dir, Manifest), 0o644, append(b, '\n'))
	}
	base := strings.TrimSuffix(path.Clean("/"+srv), "/") + "/api/contents/"
	var notebooks []entry
	var walk func(p string, depth int) error
	walk = func(p string, depth int) error {
		body, _, err := c.do(ctx, http.MethodGet, c.abs(base+p, url.Values{"content": {"1"}}), MaxListBytes, http.StatusOK)
		if err != nil {
			return fmt.Errorf("listing %s: %w", p, err)
		}
		var d entry
		if err := json.Unmarshal(body, &d); err != nil || d.Type != "directory" {
			return fmt.Errorf("listing %s: not a Jupyter directory model", p)
		}
		var items []entry
		if err := json.Unmarshal(d.Content, &items); err != nil {
			return fmt.Errorf("listing %s: %w", p, err)
		}
		for _, it := range items {
			switch {
			case strings.HasPrefix(it.Name, "."):
			case it.Type == "directory" && depth < maxDepth:
				if err := walk(it.Path, depth+1); err != nil {
					return err
				}
			case it.Type == "notebook" || it.Type == "file" && strings.EqualFold(path.Ext(it.Name), ".ipynb"):
				notebooks = append(notebooks, it)
			}
		}
		return nil
	}
	folder := ""
	for i, f := range c.folders {
		err := walk(f, 0)
		var he *HTTPError
		if err != nil && errors.As(err, &he) && he.Status == http.StatusNotFound && i+1 < len(c.folders) {
			continue // not there: the next place the course may be
		}
		if err != nil {
			return err
		}
		folder = f
		break
	}
	if len(notebooks) > c.MaxFiles {
		return fmt.Errorf("%d notebooks in %s, over the bound of %d (-max-files)", len(notebooks), folder, c.MaxFiles)
	}
	on := map[string]bool{}
	for _, nb := range notebooks {
		rel, ok := strings.CutPrefix(nb.Path, folder+"/")
		if !ok || rel == "" || rel != path.Clean(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("the server listed %q in %s: a path outside it", nb.Path, folder)
		}
		on[rel] = true
		local := filepath.Join(dir, filepath.FromSlash(rel))
		l.Files = append(l.Files, rel)
		if nb.Size != nil && *nb.Size > c.MaxBytes {
			return fmt.Errorf("%s: %d bytes, over the bound of %d (-max-size)", nb.Path, *nb.Size, c.MaxBytes)
		}
		if m, ok := man.Files[rel]; ok && nb.Size != nil && m.Size == *nb.Size && m.LastModified.Equal(nb.LastModified) {
			if fi, err := os.Stat(local); err == nil && fi.Size() == m.Size {
				continue // collected before, unchanged since
			}
		}
		// The file as stored, byte for byte: type=file&format=text, not the
		// notebook model the server would re-serialize.
		body, _, err := c.do(ctx, http.MethodGet, c.abs(base+nb.Path, url.Values{"content": {"1"}, "type": {"file"}, "format": {"text"}}), c.MaxBytes+MaxListBytes, http.StatusOK)
		if err != nil {
			return fmt.Errorf("fetching %s: %w", nb.Path, err)
		}
		var f entry
		if err := json.Unmarshal(body, &f); err != nil {
			return fmt.Errorf("fetching %s: not a Jupyter file model: %w", nb.Path, err)
		}
		var text string
		if err := json.Unmarshal(f.Content, &text); err != nil || f.Format != "text" {
			return fmt.Errorf("fetching %s: the server sent no text content (format %q)", nb.Path, f.Format)
		}
		if int64(len(text)) > c.MaxBytes {
			return fmt.Errorf("fetching %s: %w: %d bytes, over %d (-max-size)", nb.Path, ErrTooLarge, len(text), c.MaxBytes)
		}
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(local, 0o644, []byte(text)); err != nil {
			return err
		}
		if !f.LastModified.IsZero() {
			_ = os.Chtimes(local, f.LastModified, f.LastModified)
		}
		man.Files[rel] = fileMeta{Size: int64(len(text)), LastModified: f.LastModified}
		if nb.Size != nil {
			// The listing's size is what the next run compares with.
			man.Files[rel] = fileMeta{Size: *nb.Size, LastModified: nb.LastModified}
		}
		l.Fetched = append(l.Fetched, rel)
		if err := saveMan(); err != nil {
			return err
		}
	}
	for rel := range man.Files {
		if !on[rel] {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil && !os.IsNotExist(err) {
				return err
			}
			delete(man.Files, rel)
			l.Removed = append(l.Removed, rel)
		}
	}
	sort.Strings(l.Files)
	sort.Strings(l.Removed)
	return saveMan()
}
