package collect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzHubResponses feeds Collect a hub whose every answer is the fuzzed
// body: the user list, the user model, the progress stream, the contents
// listing and the file. Whatever it says, Collect returns (an error or
// learners with errors), never panics, and writes nothing outside OUT.
// The seed corpus (testdata/fuzz/FuzzHubResponses) holds the shapes the
// real JupyterHub 5 and jupyter_server 2 send, and broken ones.
func FuzzHubResponses(f *testing.F) {
	f.Add(`{"items": [{"name": "ada", "kind": "user", "servers": {"": {"ready": true, "url": "/user/ada/"}}}], "_pagination": {"next": null}}`)
	f.Add(`[{"name": "../etc", "servers": {}}]`)
	f.Fuzz(func(t *testing.T, body string) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/progress") {
				w.Header().Set("Content-Type", "text/event-stream")
			}
			_, _ = w.Write([]byte(body))
		}))
		defer srv.Close()
		out := filepath.Join(t.TempDir(), "out")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := Collect(ctx, Options{Hub: srv.URL, Token: "t", Out: out, StartTimeout: time.Second, RequestTimeout: time.Second, MaxFiles: 5, MaxBytes: 1 << 16})
		if err != nil {
			return
		}
		for _, l := range res.Learners {
			if l.Err == nil && folderName(l.Name) != "" {
				t.Fatalf("learner %q collected into a folder it may not have", l.Name)
			}
			for _, f := range append(l.Files, l.Fetched...) {
				if f != filepath.Clean(f) || strings.HasPrefix(f, "../") || filepath.IsAbs(f) {
					t.Fatalf("file %q outside the learner's folder", f)
				}
			}
		}
	})
}
