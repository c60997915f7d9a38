package intake

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/internal/attempt"
)

// TestSettleRoles checks the roles settle gives, on submissions made by
// hand.
func TestSettleRoles(t *testing.T) {
	written := answers.Found{Calls: []answers.Call{{ID: "01-sectors/sectors-float", Form: answers.FormLiteral, Value: 4}}}
	offered := answers.Found{Calls: []answers.Call{{ID: "01-sectors/sectors-float", Form: answers.FormPlaceholder}}}
	subs := []Submission{
		{Path: "s/ada/01-sectors-Copy1.ipynb", Learner: "ada", Lesson: "01-sectors", Found: written},
		{Path: "s/ada/01-sectors.ipynb", Learner: "ada", Lesson: "01-sectors", Found: written},
		{Path: "s/ada/02-coalescing.ipynb", Learner: "ada", Lesson: "02-coalescing"},
		{Path: "s/bob/01-sectors.ipynb", Learner: "bob", Lesson: "01-sectors", Claimed: []string{"Bob Ross"}, Found: written},
		// The course's new version, offered beside bob's edited lesson
		// (scripts/course_home.sh): nothing of bob's in it.
		{Path: "s/bob/01-sectors.new.ipynb", Learner: "bob", Lesson: "01-sectors", Found: offered},
		// A scratch notebook named like a lesson: not the course's.
		{Path: "s/cy/02-coalescing-notes.ipynb", Learner: "cy", Lesson: "02-coalescing", Ignored: "not a notebook of this course"},
		{Path: "s/cy/02-coalescing.ipynb", Learner: "cy", Lesson: "02-coalescing", Found: written},
	}
	Settle(subs)
	want := []Role{RoleDuplicate, RoleGraded, RoleGraded, RoleGraded, RoleDuplicate, RoleGraded, RoleGraded}
	for i, s := range subs {
		assert.Equal(t, want[i], s.Role, s.Path)
	}
	assert.Equal(t, []Flag{FlagDuplicate}, subs[0].Flags)
	assert.Empty(t, subs[3].Flags, "Bob Ross is bob, and an untouched offered copy is no second answer")
	assert.Empty(t, subs[4].Flags)
	assert.Empty(t, subs[6].Flags, "a scratch notebook is no duplicate")
}

// TestSettleCopies: what a saved notebook carries flags a copy between
// learners: the same attempt record (a first prediction's instant) in
// two learners' notebooks flags both; outputs showing another learner's
// variant flag the notebook that shows it.
func TestSettleCopies(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	rec := func(id string, t time.Time) answers.Attempt {
		return answers.Attempt{Record: attempt.Record{ID: id, First: attempt.Value{Value: 4, Time: t}, Attempts: 1, Last: attempt.Value{Value: 4, Time: t}}}
	}
	subs := []Submission{
		{Path: "s/ada/01-sectors.ipynb", Learner: "ada", Found: answers.Found{Attempts: []answers.Attempt{rec("01-sectors/sectors-float", at)}}},
		{Path: "s/cy/01-sectors.ipynb", Learner: "cy", Found: answers.Found{Attempts: []answers.Attempt{rec("01-sectors/sectors-float", at)}}},
		{Path: "s/bob/01-sectors.ipynb", Learner: "bob", Found: answers.Found{Attempts: []answers.Attempt{rec("01-sectors/sectors-float", at.Add(time.Nanosecond))}}},
		{Path: "s/bob/10-kernels.ipynb", Learner: "bob", Found: answers.Found{Learners: []string{"ada", "bob", "zed"}}},
		{Path: "s/ada/10-kernels.ipynb", Learner: "ada", Found: answers.Found{Learners: []string{"ada"}}},
	}
	Settle(subs)
	assert.Equal(t, []string{"possible copy: 01-sectors.ipynb holds the attempt record of cy's 01-sectors.ipynb (01-sectors/sectors-float, first predicted 2026-12-01T10:00:00.123456789Z)"}, subs[0].Notes)
	assert.Equal(t, []string{"possible copy: 01-sectors.ipynb holds the attempt record of ada's 01-sectors.ipynb (01-sectors/sectors-float, first predicted 2026-12-01T10:00:00.123456789Z)"}, subs[1].Notes)
	assert.Empty(t, subs[2].Flags, "a nanosecond apart: two predictions")
	assert.Equal(t, []Flag{FlagPossibleCopy}, subs[3].Flags, "zed is no learner of the batch; ada is")
	assert.Equal(t, []string{"possible copy: its saved outputs show the variant of learner ada"}, subs[3].Notes)
	assert.Empty(t, subs[4].Flags, "ada's own variant")
}

func TestSameName(t *testing.T) {
	tests := []struct {
		name, learner string
		want          bool
	}{
		{"Ada Lovelace", "ada", true},
		{"Ada Lovelace", "alovelace", true},
		{"Ada Lovelace", "ada-lovelace", true},
		{"ADA", "ada", true},
		{"Ada Lovelace", "bob", false},
		{"Al", "alan", false}, // two letters are too few to be part of a name
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.learner, func(t *testing.T) {
			assert.Equal(t, tt.want, sameName(tt.name, tt.learner))
		})
	}
}

func TestIdentify(t *testing.T) {
	tests := []struct {
		name       string
		path, root string
		want, from string
	}{
		{"the folder below the root", "s/bob/a.ipynb", "s", "bob", FromFolder},
		{"the first folder, however deep", "s/bob/lesson/a.ipynb", "s", "bob", FromFolder},
		{"a file at the top: its name", "s/bob.ipynb", "s", "bob", FromFileName},
		{"a lesson's file at the top: the root, a learner's folder", "s/ada/01-sectors.ipynb", "s/ada", "ada", FromFolder},
		{"a file named alone", "x/y/carol.ipynb", "", "carol", FromFileName},
		{"a lesson's file named alone: its folder", "x/dan/01-sectors.ipynb", "", "dan", FromFolder},
		{"Untitled named alone: its folder", "x/eve/Untitled1.ipynb", "", "eve", FromFolder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from := Identify(filepath.FromSlash(tt.path), filepath.FromSlash(tt.root))
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.from, from)
		})
	}
}
