package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeHub answers the part of JupyterHub's REST API and of Jupyter
// server's contents API that Collect uses, from files per user, the way
// JupyterHub 5 and jupyter_server 2 answer (pagination, progress events,
// directory and file models). The real ones are TestJupyterHub's, in
// deploy/.
type fakeHub struct {
	t       *testing.T
	mu      sync.Mutex
	token   string
	pageLen int
	users   map[string]*fakeUser
	log     []string // "POST ada", "DELETE ada", "GET ada/01.ipynb"
}

type fakeUser struct {
	admin   bool
	running bool
	fail    string            // a start fails with this message
	files   map[string]string // path below the server root -> content
	mtime   time.Time
	denied  bool // contents answer 403
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Header.Get("Authorization") != "token "+h.token {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"status": 403, "message": "Forbidden"}`)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/hub/api/users" && r.Method == http.MethodGet:
		var names []string
		for n := range h.users {
			names = append(names, n)
		}
		slices.Sort(names)
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		end := min(off+h.pageLen, len(names))
		var items []any
		for _, n := range names[off:end] {
			items = append(items, h.model(n))
		}
		var next any
		if end < len(names) {
			next = map[string]int{"offset": end, "limit": h.pageLen}
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items, "_pagination": map[string]any{"offset": off, "limit": h.pageLen, "total": len(names), "next": next}})
	case strings.HasPrefix(p, "/hub/api/users/"):
		rest := strings.TrimPrefix(p, "/hub/api/users/")
		name, sub, _ := strings.Cut(rest, "/")
		u := h.users[name]
		if u == nil {
			http.NotFound(w, r)
			return
		}
		switch {
		case sub == "" && r.Method == http.MethodGet:
			json.NewEncoder(w).Encode(h.model(name))
		case sub == "server" && r.Method == http.MethodPost:
			h.log = append(h.log, "POST "+name)
			if u.running {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"status": 400, "message": "%s is already running"}`, name)
				return
			}
			if u.fail == "" {
				u.running = true
			}
			w.WriteHeader(http.StatusAccepted)
		case sub == "server/progress":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"progress\": 10, \"message\": \"Spawning server...\"}\n\n")
			if u.fail != "" {
				fmt.Fprintf(w, "data: {\"progress\": 100, \"failed\": true, \"message\": %q}\n\n", "Spawn failed: "+u.fail)
				return
			}
			fmt.Fprintf(w, "data: {\"progress\": 100, \"ready\": true, \"message\": \"Server ready\", \"url\": \"/user/%s/\"}\n\n", name)
		case sub == "server" && r.Method == http.MethodDelete:
			h.log = append(h.log, "DELETE "+name)
			u.running = false
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	case strings.HasPrefix(p, "/user/"):
		name, rest, _ := strings.Cut(strings.TrimPrefix(p, "/user/"), "/")
		u := h.users[name]
		if u == nil || !u.running {
			http.Redirect(w, r, "/hub/user/"+name+"/", http.StatusFound)
			return
		}
		if u.denied {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message": "Forbidden"}`)
			return
		}
		fp, ok := strings.CutPrefix(rest, "api/contents/")
		require.True(h.t, ok, rest)
		h.contents(w, r, name, u, fp)
	default:
		http.NotFound(w, r)
	}
}

func (h *fakeHub) model(name string) map[string]any {
	u := h.users[name]
	servers := map[string]any{}
	if u.running {
		servers[""] = map[string]any{"name": "", "ready": true, "pending": nil, "url": "/user/" + name + "/", "progress_url": "/hub/api/users/" + name + "/server/progress"}
	}
	return map[string]any{"kind": "user", "name": name, "admin": u.admin, "servers": servers}
}

func (h *fakeHub) contents(w http.ResponseWriter, r *http.Request, name string, u *fakeUser, fp string) {
	if body, ok := u.files[fp]; ok {
		h.log = append(h.log, "GET "+name+"/"+fp)
		assert.Equal(h.t, "file", r.URL.Query().Get("type"))
		assert.Equal(h.t, "text", r.URL.Query().Get("format"))
		json.NewEncoder(w).Encode(map[string]any{"name": filepath.Base(fp), "path": fp, "type": "file", "format": "text", "content": body, "size": len(body), "last_modified": u.mtime})
		return
	}
	var items []map[string]any
	seen := map[string]bool{}
	for f, body := range u.files {
		rel, ok := strings.CutPrefix(f, fp+"/")
		if !ok {
			continue
		}
		child, _, deeper := strings.Cut(rel, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		it := map[string]any{"name": child, "path": fp + "/" + child, "last_modified": u.mtime, "content": nil, "format": nil}
		switch {
		case deeper:
			it["type"], it["size"] = "directory", nil
		case strings.HasSuffix(child, ".ipynb"):
			it["type"], it["size"] = "notebook", len(body)
		default:
			it["type"], it["size"] = "file", len(body)
		}
		items = append(items, it)
	}
	if items == nil {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message": "No such file or directory: %s"}`, fp)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"name": filepath.Base(fp), "path": fp, "type": "directory", "format": "json", "content": items})
}

func newHub(t *testing.T) (*fakeHub, *httptest.Server) {
	t.Helper()
	mtime := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h := &fakeHub{t: t, token: "s3cret", pageLen: 2, users: map[string]*fakeUser{
		"ada": {running: true, mtime: mtime, files: map[string]string{
			"course/notebooks/01-sectors.ipynb":        `{"cells": []}`,
			"course/notebooks/Untitled.ipynb":          `{"cells": [1]}`,
			"course/notebooks/README.md":               "not a notebook",
			"course/notebooks/.coalesce/attempts.json": "{}",
			"course/notebooks/old/03-strided.ipynb":    `{"cells": [3]}`,
		}},
		// bob's server is rooted at ~/course (docs/running.md's notebookDir),
		// ada's at her home: both are found.
		"bob":   {mtime: mtime, files: map[string]string{"notebooks/10-kernels.ipynb": `{"cells": [10]}`}},
		"cy":    {mtime: mtime, fail: "No such directory: /home/cy/course"},
		"prof":  {admin: true, running: true, mtime: mtime, files: map[string]string{"course/notebooks/x.ipynb": "{}"}},
		"dee":   {running: true, denied: true, mtime: mtime, files: map[string]string{"notebooks/x.ipynb": "{}"}},
		".evil": {running: true, mtime: mtime},
	}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

func TestCollect(t *testing.T) {
	h, srv := newHub(t)
	out := filepath.Join(t.TempDir(), "submissions")
	opt := Options{Hub: srv.URL + "/hub/", Token: "s3cret\n", Out: out, Parallel: 2, StartTimeout: 10 * time.Second}
	res, err := Collect(context.Background(), opt)
	require.NoError(t, err)

	byName := map[string]Learner{}
	var names []string
	for _, l := range res.Learners {
		byName[l.Name] = l
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{".evil", "ada", "bob", "cy", "dee"}, names, "every user but the admin, sorted")

	ada := byName["ada"]
	require.NoError(t, ada.Err)
	assert.Equal(t, []string{"01-sectors.ipynb", "Untitled.ipynb", "old/03-strided.ipynb"}, ada.Files, "notebooks only, subfolders too, dot folders not")
	assert.False(t, ada.Started, "ada's server was running")
	b, err := os.ReadFile(filepath.Join(out, "ada", "old", "03-strided.ipynb"))
	require.NoError(t, err)
	assert.Equal(t, `{"cells": [3]}`, string(b), "the file as stored")
	fi, err := os.Stat(filepath.Join(out, "ada", "01-sectors.ipynb"))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(h.users["ada"].mtime), "the server's modification time, for the gradebook's submitted column: %v", fi.ModTime())

	bob := byName["bob"]
	require.NoError(t, bob.Err)
	assert.Equal(t, []string{"10-kernels.ipynb"}, bob.Files)
	assert.True(t, bob.Started, "bob's stopped server was started")
	assert.False(t, h.users["bob"].running, "and stopped again")
	assert.Contains(t, h.log, "POST bob")
	assert.Contains(t, h.log, "DELETE bob")
	assert.NotContains(t, h.log, "DELETE ada", "a server this run did not start is left running")

	require.Error(t, byName["cy"].Err)
	assert.EqualError(t, byName["cy"].Err, "collect: cy: the server failed to start: Spawn failed: No such directory: /home/cy/course")
	require.Error(t, byName["dee"].Err)
	assert.Contains(t, byName["dee"].Err.Error(), "collect: dee: listing notebooks: GET "+srv.URL+"/user/dee/api/contents/notebooks?content=1: HTTP 403 Forbidden")
	assert.Contains(t, byName["dee"].Err.Error(), "lacks a scope")
	assert.Contains(t, byName[".evil"].Err.Error(), "starting with a dot")
	assert.Len(t, res.Failed(), 3)

	assert.Equal(t, "# the users of "+srv.URL+"/, 2026-12-01T12:00:00Z (coalesce collect)\n.evil\nada\nbob\ncy\ndee\n",
		res.Roster(srv.URL+"/", time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)))

	t.Run("a second run fetches only what changed and removes what went", func(t *testing.T) {
		h.mu.Lock()
		h.log = nil
		delete(h.users["ada"].files, "course/notebooks/Untitled.ipynb")
		h.users["ada"].files["course/notebooks/01-sectors.ipynb"] = `{"cells": ["v2"]}`
		h.mu.Unlock()
		writeFile(t, filepath.Join(out, "ada", "mine.ipynb"), "the instructor's own file")
		res, err := Collect(context.Background(), Options{Hub: srv.URL, Token: "s3cret", Out: out, Users: []string{"ada"}})
		require.NoError(t, err)
		require.Len(t, res.Learners, 1)
		ada := res.Learners[0]
		require.NoError(t, ada.Err)
		assert.Equal(t, []string{"01-sectors.ipynb"}, ada.Fetched)
		assert.Equal(t, []string{"Untitled.ipynb"}, ada.Removed)
		assert.NoFileExists(t, filepath.Join(out, "ada", "Untitled.ipynb"))
		assert.FileExists(t, filepath.Join(out, "ada", "mine.ipynb"), "a file collect did not write is never removed")
		assert.Equal(t, []string{"GET ada/course/notebooks/01-sectors.ipynb"}, h.log)
	})

	t.Run("bounds", func(t *testing.T) {
		res, err := Collect(context.Background(), Options{Hub: srv.URL, Token: "s3cret", Out: t.TempDir(), Users: []string{"ada"}, MaxBytes: 5})
		require.NoError(t, err)
		assert.ErrorContains(t, res.Learners[0].Err, "over the bound of 5 (-max-size)")
		res, err = Collect(context.Background(), Options{Hub: srv.URL, Token: "s3cret", Out: t.TempDir(), Users: []string{"ada"}, MaxFiles: 1})
		require.NoError(t, err)
		assert.ErrorContains(t, res.Learners[0].Err, "2 notebooks in course/notebooks, over the bound of 1 (-max-files)")
	})
	t.Run("an explicit folder is the only one tried", func(t *testing.T) {
		res, err := Collect(context.Background(), Options{Hub: srv.URL, Token: "s3cret", Out: t.TempDir(), Users: []string{"ada"}, Folder: "/notebooks/"})
		require.NoError(t, err)
		assert.ErrorContains(t, res.Learners[0].Err, "listing notebooks: GET "+srv.URL+"/user/ada/api/contents/notebooks?content=1: HTTP 404 Not Found: No such file or directory: notebooks")
	})
	t.Run("admins only when asked", func(t *testing.T) {
		res, err := Collect(context.Background(), Options{Hub: srv.URL, Token: "s3cret", Out: t.TempDir(), Admins: true, NoStart: true})
		require.NoError(t, err)
		var names []string
		for _, l := range res.Learners {
			names = append(names, l.Name)
		}
		assert.Contains(t, names, "prof")
	})
	t.Run("no start", func(t *testing.T) {
		res, err := Collect(context.Background(), Options{Hub: srv.URL, Token: "s3cret", Out: t.TempDir(), Users: []string{"bob"}, NoStart: true})
		require.NoError(t, err)
		assert.EqualError(t, res.Learners[0].Err, "collect: bob: the server is stopped (-no-start): not collected")
	})
}

func TestCollectErrors(t *testing.T) {
	_, srv := newHub(t)
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"no hub", Options{Token: "s3cret", Out: "x"}, "collect: no hub URL"},
		{"not a URL", Options{Hub: "hub.example.edu", Token: "s3cret", Out: "x"}, `collect: hub URL "hub.example.edu": want http(s)://HOST[/PREFIX/]`},
		{"no token", Options{Hub: srv.URL, Token: " \n", Out: "x"}, "collect: no token: give -token-file FILE or set JUPYTERHUB_API_TOKEN"},
		{"a wrong token", Options{Hub: srv.URL, Token: "nope", Out: t.TempDir()}, "collect: listing the hub's users: GET " + srv.URL + "/hub/api/users?limit=200&offset=0: HTTP 403 Forbidden: Forbidden (the token lacks a scope"},
		{"an unknown user", Options{Hub: srv.URL, Token: "s3cret", Out: t.TempDir(), Users: []string{"zed"}}, "collect: zed is not a user of " + srv.URL + "/ (it has 6: .evil, ada, bob, cy, dee, prof)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Collect(context.Background(), tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
}

// TestCollectPathOutside: a listing naming a file outside the folder (a
// hostile or broken server) is an error naming it, and nothing is written
// outside OUT/LEARNER.
func TestCollectPathOutside(t *testing.T) {
	for _, p := range []string{"notebooks/../../x.ipynb", "other/x.ipynb", "notebooks/a/../../x.ipynb"} {
		t.Run(p, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/hub/api/users":
					fmt.Fprint(w, `{"items": [{"name": "ada", "servers": {"": {"ready": true, "url": "/user/ada/"}}}], "_pagination": {"next": null}}`)
				default:
					fmt.Fprintf(w, `{"type": "directory", "content": [{"name": "x.ipynb", "path": %q, "type": "notebook", "size": 2}]}`, p)
				}
			}))
			defer srv.Close()
			dir := t.TempDir()
			res, err := Collect(context.Background(), Options{Hub: srv.URL, Token: "t", Out: filepath.Join(dir, "out")})
			require.NoError(t, err)
			assert.ErrorContains(t, res.Learners[0].Err, fmt.Sprintf("collect: ada: the server listed %q in notebooks: a path outside it", p))
			assert.NoFileExists(t, filepath.Join(dir, "x.ipynb"))
		})
	}
}
