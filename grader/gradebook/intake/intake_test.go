package intake

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSettleRoles checks the roles settle gives, on submissions made by
// hand.
func TestSettleRoles(t *testing.T) {
	subs := []Submission{
		{Path: "s/ada/01-sectors-Copy1.ipynb", Learner: "ada", Lesson: "01-sectors"},
		{Path: "s/ada/01-sectors.ipynb", Learner: "ada", Lesson: "01-sectors"},
		{Path: "s/ada/02-coalescing.ipynb", Learner: "ada", Lesson: "02-coalescing"},
		{Path: "s/bob/01-sectors.ipynb", Learner: "bob", Lesson: "01-sectors", Claimed: []string{"Bob Ross"}},
	}
	Settle(subs)
	want := []Role{RoleDuplicate, RoleGraded, RoleGraded, RoleGraded}
	for i, s := range subs {
		assert.Equal(t, want[i], s.Role, s.Path)
	}
	assert.Equal(t, []Flag{FlagDuplicate}, subs[0].Flags)
	assert.Empty(t, subs[3].Flags, "Bob Ross is bob")
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
