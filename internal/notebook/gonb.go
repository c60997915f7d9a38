package notebook

import "strings"

// GoNB is a GoNB code cell taken apart the way the GoNB kernel does it
// before it compiles the cell: special lines out, and the lines after %%
// (or %main) made the body of func main. Decls and Body have as many lines
// as the cell, the lines that are not theirs left empty, so a line number
// in either is the cell's own.
type GoNB struct {
	// NotGo is a cell GoNB does not compile: its first line is a cell
	// command such as %%writefile, %%script, %%bash, %%sh or %%gx.
	NotGo bool
	// Decls holds the lines before %% (all of them when there is none):
	// declarations, for GoNB.
	Decls string
	// Body holds the lines after %%: the statements of func main. It is
	// empty when the cell has no %% line.
	Body string
	// HasMain is true when the cell has a %% or %main line.
	HasMain bool
	// Special lists the 1-based numbers of the special lines: %magic and
	// !shell commands, with their \ continuation lines, and %%.
	Special []int
}

// gonbPrefix is the comment prefix GoNB strips from a line before it looks
// for a special command, so that `//gonb:%%` keeps a cell valid Go for editors.
const gonbPrefix = "//gonb:"

// cellCommands are the first-line commands that make a whole cell not Go.
var cellCommands = []string{"%%writefile", "%%script", "%%bash", "%%sh", "%%gx"}

// SplitGoNB takes the source of a GoNB code cell apart. It follows GoNB's
// own rules: a line is special when, after an optional //gonb: prefix, its
// first character is % or ! (no leading space) and something follows; a
// special line ending in \ continues on the next line; %% or %main starts
// the body of main; %exec NAME declares a main that calls NAME.
func SplitGoNB(src string) GoNB {
	lines := strings.Split(src, "\n")
	var c GoNB
	if len(lines) > 0 {
		first := strings.Fields(strings.TrimPrefix(lines[0], gonbPrefix))
		if len(first) > 0 {
			for _, cmd := range cellCommands {
				if first[0] == cmd {
					c.NotGo = true
					return c
				}
			}
		}
	}
	decls := make([]string, len(lines))
	body := make([]string, len(lines))
	inMain := false
	continued := false
	for i, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimPrefix(line, gonbPrefix)
		special := continued || len(trimmed) > 1 && (trimmed[0] == '%' || trimmed[0] == '!')
		if special {
			c.Special = append(c.Special, i+1)
			continued = strings.HasSuffix(trimmed, `\`)
			if !inMain && (strings.HasPrefix(trimmed, "%main") || isMainMarker(trimmed)) {
				inMain, c.HasMain = true, true
			}
			continue
		}
		if strings.HasPrefix(line, "package") {
			continue // GoNB drops package clauses and writes its own.
		}
		if inMain {
			body[i] = line
		} else {
			decls[i] = line
		}
	}
	c.Decls = strings.Join(decls, "\n")
	if c.HasMain {
		c.Body = strings.Join(body, "\n")
	}
	return c
}

// isMainMarker reports whether line is %% alone or followed by arguments.
func isMainMarker(line string) bool {
	return strings.HasPrefix(line, "%%") && (len(line) == 2 || line[2] == ' ' || line[2] == '\t')
}
