package answers

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/constexpr"
	"github.com/coalescing-course/coalesce/internal/notebook"
	"github.com/coalescing-course/coalesce/internal/words"
)

// ModulePath is the course's module path.
const ModulePath = "github.com/coalescing-course/coalesce"

// CheckPackages are the packages whose Check records a prediction, by
// import path, with the name a cell calls each by default: the notebook
// face, lab, and the grader package, where Check lived in the course's
// first build, so that notebooks saved then still grade.
var CheckPackages = map[string]string{
	ModulePath + "/lab":    "lab",
	ModulePath + "/grader": "grader",
}

// Form says how a prediction was written.
type Form int

const (
	// FormUnreadable is a prediction that is not a number written in the call:
	// a variable, a function call, a string, a call that never ran.
	FormUnreadable Form = iota
	// FormLiteral is a number, with or without a sign: 32, -0.5, 1e3, 0x20.
	FormLiteral
	// FormConstant is a constant expression of numbers (package
	// internal/constexpr: operators, conversions such as float64(3)/2, min
	// and max), evaluated as the Go compiler evaluated it for the running
	// notebook: 1<<5 is 32, 64/2 is 32, and 1/8 is 0 (integer division).
	FormConstant
	// FormPlaceholder is no prediction written: the placeholder a lesson
	// ships, lab.YourPrediction, or a 0 in a cell left exactly as the
	// course's first build shipped it (Call.Template). The exercise counts
	// as missing.
	FormPlaceholder
)

// Placeholder is the name of the placeholder prediction in lab.
const Placeholder = "YourPrediction"

// What the reader takes of lab, by name: the calls a notebook answers
// with. TestReaderMatchesLab reads lab's exported API and fails when one
// of them is no longer what the reader takes it for, or when lab gains an
// entry point that takes an id the reader does not know.
const (
	// checkFunc is lab.Check(id string, prediction float64): a prediction.
	checkFunc = "Check"
	// tryFunc is lab.Try(id string, kernel any): a kernel exercise
	// answered in Go, with the name of the learner's func, or a Gather.
	tryFunc = "Try"
	// gatherType is lab.Gather{Order: O, Kernel: K}, the gather's answer,
	// given to Try: two funcs.
	gatherType, gatherOrder, gatherKernel = "Gather", "Order", "Kernel"
	// callArgs is how many arguments Check and Try take.
	callArgs = 2
)

func (f Form) String() string {
	switch f {
	case FormLiteral:
		return "literal"
	case FormConstant:
		return "constant expression"
	case FormPlaceholder:
		return "placeholder"
	}
	return "unreadable"
}

// ErrPrediction is a prediction that cannot be read from the source.
var ErrPrediction = errors.New("prediction not readable")

// ParsePrediction reads the prediction argument of a Check call from its
// source text: a numeric literal, or a constant expression of numbers
// (see Form). Anything else, and anything Go would not compile as the
// float64 argument, is an error wrapping ErrPrediction that says what was
// found.
func ParsePrediction(src string) (float64, Form, error) {
	if len(src) > constexpr.MaxSource {
		return 0, FormUnreadable, fmt.Errorf("%w: the expression is %d bytes, over the %d read", ErrPrediction, len(src), constexpr.MaxSource)
	}
	x, err := parser.ParseExpr(src)
	if err != nil {
		return 0, FormUnreadable, fmt.Errorf("%w: %q is not a Go expression", ErrPrediction, clip(src, 40))
	}
	r, form, err := evalPrediction(x, nil)
	return r.Value, form, err
}

// evalPrediction evaluates a prediction argument as the compiler did;
// shadowed names the predeclared names the notebook redeclares.
func evalPrediction(x ast.Expr, shadowed map[string]bool) (constexpr.Result, Form, error) {
	r, err := constexpr.Float64(x, constexpr.Options{Shadowed: func(n string) bool { return shadowed[n] }})
	if err != nil {
		msg := err.Error()
		var ce *constexpr.Error
		if errors.As(err, &ce) {
			msg = ce.Msg
		}
		return constexpr.Result{}, FormUnreadable, fmt.Errorf("%w: %s", ErrPrediction, msg)
	}
	form := FormConstant
	if isSignedLiteral(x) {
		form = FormLiteral
	}
	return r, form, nil
}

func isSignedLiteral(x ast.Expr) bool {
	for {
		switch e := x.(type) {
		case *ast.ParenExpr:
			x = e.X
		case *ast.UnaryExpr:
			if e.Op != token.SUB && e.Op != token.ADD {
				return false
			}
			x = e.X
		case *ast.BasicLit:
			return e.Kind == token.INT || e.Kind == token.FLOAT
		default:
			return false
		}
	}
}

// FormatNumber writes a prediction or an answer for the gradebook's
// files with every digit it has: the shortest decimal that reads back as
// the same float64 (strconv's -1 precision), without an exponent from
// 1e-6 to 1e21 so that spreadsheets read it as written. 123456789.5 stays
// 123456789.5, never 1.23457e+08.
func FormatNumber(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Call is one Check call (lab.Check) found in a notebook's code.
type Call struct {
	// Cell is the cell's index in the notebook, Line the 1-based line in it.
	Cell, Line int
	// ID is the exercise id, "" when the first argument is not a string
	// literal; IDText is that argument as written.
	ID, IDText string
	// Arg is the prediction as written; Value its value when Form is not
	// FormUnreadable; Problem says why it cannot be read.
	Arg     string
	Value   float64
	Form    Form
	Problem string
	// Truncated is true when Go's integer division changed the value of a
	// constant expression (100/6 is 16).
	Truncated bool
	// Template is true for a 0 in a cell byte-identical to a prediction
	// cell of the course's first build, which shipped 0 where lessons now
	// ship lab.YourPrediction, when the notebook holds no attempt record
	// for the exercise: no prediction was written (Form is
	// FormPlaceholder). With a recorded attempt the 0 was run, and is a
	// prediction; a 0 in a changed cell always is.
	Template bool
	// OutsideMain is true for a call in the statements of a cell that has
	// no %% (or %main) above them: GoNB compiles the lines before %% as
	// declarations, so the cell failed and the call never ran (Form is
	// FormUnreadable; Problem says so).
	OutsideMain bool
}

// Mention is a Check call seen where it is not run: in a comment, a
// markdown or raw cell, or a cell GoNB does not compile as Go.
type Mention struct {
	Cell, Line int
	ID         string
	Where      string // "a comment", "a markdown cell", ...
}

// Attempt is an attempt record (package attempt) that a Check cell's
// saved output carries: the learner's first prediction and their count.
type Attempt struct {
	Cell   int
	Record attempt.Record
}

// BadAttempt is an attempt record in a saved output that does not parse:
// its cell, the exercise id when it can be read, and what is wrong.
type BadAttempt struct {
	Cell    int
	ID      string
	Problem string
}

// Found is what FindCalls read from a notebook.
type Found struct {
	Calls    []Call
	Mentions []Mention
	// Attempts are the attempt records in the code cells' saved outputs,
	// in notebook order; BadAttempts are those that did not parse.
	Attempts    []Attempt
	BadAttempts []BadAttempt
	// Course is true when some code cell imports the course's module.
	Course bool
	// Tries are the lab.Try calls, a kernel each, in notebook order:
	// graded only with Options.RunKernels, which runs them.
	Tries []Try
	// Learners are the learners the saved outputs show a variant for
	// (lab's "(learner ada)" in a kernel exercise's text), each once, in
	// order: evidence of whose notebook it was when it ran.
	Learners []string
}

// shownLearner finds the learner lab names in a display's text: the
// variant line of lab.Exercise and lab.Try, "... (learner ada): passed".
var shownLearner = regexp.MustCompile(`\(learner ([^()\s]+)\)`)

// shownLearners returns the learners the text/plain outputs of nb's code
// cells name.
func shownLearners(nb *notebook.Notebook) []string {
	var out []string
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			raw, ok := o.Data["text/plain"]
			if !ok {
				continue
			}
			var text string
			if json.Unmarshal(raw, &text) != nil {
				var lines []string
				if json.Unmarshal(raw, &lines) != nil {
					continue
				}
				text = strings.Join(lines, "")
			}
			for _, m := range shownLearner.FindAllStringSubmatch(text, -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		}
	}
	return out
}

// FindCalls reads every Check call that records a prediction
// (CheckPackages) from the code cells of nb, in notebook order, by parsing
// the cells as Go (GoNB's special lines set aside). It never runs
// anything. A package is known by its default name (lab, or grader in
// notebooks of the first build) and by any name a cell imports it under
// (a dot import makes a bare Check count).
func FindCalls(nb *notebook.Notebook) Found {
	var f Found
	names := map[string]bool{}
	for _, name := range CheckPackages {
		names[name] = true
	}
	dot := false
	parsed := make([]*cellAST, len(nb.Cells))
	for i, c := range nb.Cells {
		if c.Type != notebook.Code {
			continue
		}
		if strings.Contains(c.Source, ModulePath) {
			f.Course = true
		}
		if importsCheck(c.Source) {
			parsed[i] = parseCell(c.Source)
			for _, file := range parsed[i].files {
				for _, imp := range file.Imports {
					if p, err := strconv.Unquote(imp.Path.Value); err != nil || CheckPackages[p] == "" {
						continue
					}
					switch {
					case imp.Name == nil:
					case imp.Name.Name == ".":
						dot = true
					case imp.Name.Name != "_":
						names[imp.Name.Name] = true
					}
				}
			}
		}
	}
	// The predeclared names a prediction may use (float64, max...) that
	// the notebook declares anew at package level: the compiler did not
	// read them as Go's.
	shadowed := map[string]bool{}
	for i, c := range nb.Cells {
		if c.Type != notebook.Code || !mentionsPredeclared(c.Source) {
			continue
		}
		if parsed[i] == nil {
			parsed[i] = parseCell(c.Source)
		}
		parsed[i].declared(false, shadowed)
	}
	for i, c := range nb.Cells {
		for _, o := range c.Outputs {
			raw, ok := o.Data[attempt.MIMEType]
			if !ok || c.Type != notebook.Code {
				continue
			}
			r, err := attempt.Parse(raw)
			if err != nil {
				bad := BadAttempt{Cell: i, Problem: strings.TrimPrefix(err.Error(), attempt.ErrRecord.Error()+": ")}
				var withID struct{ ID string }
				if json.Unmarshal(raw, &withID) != nil { // the record as a JSON string
					var s string
					if json.Unmarshal(raw, &s) == nil {
						_ = json.Unmarshal([]byte(s), &withID)
					}
				}
				bad.ID = withID.ID
				f.BadAttempts = append(f.BadAttempts, bad)
				continue
			}
			f.Attempts = append(f.Attempts, Attempt{Cell: i, Record: r})
		}
	}
	for i, c := range nb.Cells {
		if c.Type != notebook.Code {
			if strings.Contains(c.Source, checkFunc) {
				f.Mentions = append(f.Mentions, mentionsIn(c.Source, i, 0, "a "+cellTypeName(c.Type)+" cell")...)
			}
			continue
		}
		if !strings.Contains(c.Source, checkFunc) {
			continue
		}
		if parsed[i] == nil {
			parsed[i] = parseCell(c.Source)
		}
		ca := parsed[i]
		if ca.notGo {
			f.Mentions = append(f.Mentions, mentionsIn(c.Source, i, 0, "a cell GoNB does not run as Go ("+strings.Fields(c.Source)[0]+")")...)
			continue
		}
		local := maps.Clone(shadowed) // and those the cell itself declares, anywhere in it
		ca.declared(true, local)
		calls := ca.calls(i, names, local, dot)
		if isFirstBuildTemplate(c.Source) {
			for k, call := range calls {
				if call.Form == FormLiteral && call.Value == 0 && !attempted(f.Attempts, call.ID) {
					calls[k].Form, calls[k].Template = FormPlaceholder, true
				}
			}
		}
		f.Calls = append(f.Calls, calls...)
		f.Mentions = append(f.Mentions, ca.comments(i)...)
	}
	f.Tries = findTries(nb, parsed, names, dot)
	f.Learners = shownLearners(nb)
	return f
}

// attempted reports whether an attempt record of the notebook shows an
// attempt at exercise id.
func attempted(records []Attempt, id string) bool {
	return slices.ContainsFunc(records, func(a Attempt) bool { return a.Record.ID == id && a.Record.Attempts > 0 })
}

// mentionsPredeclared reports whether src may declare a predeclared name
// that constexpr reads, so that only such cells are parsed for it.
func mentionsPredeclared(src string) bool {
	return slices.ContainsFunc(constexpr.Names, func(n string) bool { return strings.Contains(src, n) })
}

// declared adds to names the predeclared names that constexpr reads and
// the cell declares: at package level only, or with all, anywhere in it
// (a variable, a parameter, a local function value).
func (ca *cellAST) declared(all bool, names map[string]bool) {
	add := func(id *ast.Ident) {
		if id != nil && slices.Contains(constexpr.Names, id.Name) {
			names[id.Name] = true
		}
	}
	for fi, f := range ca.files {
		if !all {
			if fi == ca.statements || ca.offset[fi] != strings.Count(filePrefix, "\n") {
				continue // statements: not package level
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						add(d.Name)
					}
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						switch sp := sp.(type) {
						case *ast.TypeSpec:
							add(sp.Name)
						case *ast.ValueSpec:
							for _, n := range sp.Names {
								add(n)
							}
						}
					}
				}
			}
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Recv == nil {
					add(n.Name)
				}
			case *ast.TypeSpec:
				add(n.Name)
			case *ast.ValueSpec:
				for _, id := range n.Names {
					add(id)
				}
			case *ast.Field:
				for _, id := range n.Names {
					add(id)
				}
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					for _, l := range n.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							add(id)
						}
					}
				}
			case *ast.RangeStmt:
				if n.Tok == token.DEFINE {
					for _, l := range []ast.Expr{n.Key, n.Value} {
						if id, ok := l.(*ast.Ident); ok {
							add(id)
						}
					}
				}
			}
			return true
		})
	}
}

// importsCheck reports whether a cell's source names a package of
// CheckPackages.
func importsCheck(src string) bool {
	for path := range CheckPackages {
		if strings.Contains(src, `"`+path+`"`) {
			return true
		}
	}
	return false
}

func cellTypeName(t string) string {
	if t == "" {
		return "typeless"
	}
	return t
}

// cellAST is one code cell parsed: its declarations as a file and the body
// of main as a function, or the syntax error that stopped it.
type cellAST struct {
	fset   *token.FileSet
	files  []*ast.File
	offset []int // lines to subtract from each file's positions
	src    []string
	raw    string // the cell's Go lines, special lines blanked
	err    error
	notGo  bool
	// statements is the index in files of the lines before %% parsed as
	// statements, -1 when they are declarations: GoNB does not compile
	// them, so their calls never ran.
	statements int
}

const (
	filePrefix = "package main\n"
	bodyPrefix = "package main\nfunc _() {\n"
)

func parseCell(src string) *cellAST {
	g := notebook.SplitGoNB(src)
	ca := &cellAST{fset: token.NewFileSet(), notGo: g.NotGo, statements: -1}
	if g.NotGo {
		return ca
	}
	ca.raw = g.Decls
	if g.HasMain {
		dl, bl := strings.Split(g.Decls, "\n"), strings.Split(g.Body, "\n")
		for i := range min(len(dl), len(bl)) {
			if dl[i] == "" {
				dl[i] = bl[i]
			}
		}
		ca.raw = strings.Join(dl, "\n")
	}
	add := func(prefix, code string) error {
		text := prefix + code
		if prefix == bodyPrefix {
			text += "\n}"
		}
		f, err := parser.ParseFile(ca.fset, "cell.go", text, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ca.files = append(ca.files, f)
		ca.offset = append(ca.offset, strings.Count(prefix, "\n"))
		ca.src = append(ca.src, text)
		return nil
	}
	lines := strings.Count(src, "\n") + 1
	if strings.TrimSpace(g.Decls) != "" {
		// Declarations, as GoNB wants them. Statements before %% (or in a
		// cell without one) are parsed as a function body only to report
		// their calls as never run: GoNB fails to compile such a cell.
		if err := add(filePrefix, g.Decls); err != nil {
			if err2 := add(bodyPrefix, g.Decls); err2 != nil {
				ca.err = shiftErr(err, 1, lines)
			} else {
				ca.statements = len(ca.files) - 1
			}
		}
	}
	if g.HasMain && ca.err == nil {
		if err := add(bodyPrefix, g.Body); err != nil {
			ca.err = shiftErr(err, 2, lines)
		}
	}
	return ca
}

// shiftErr reports a parse error at the cell's own line: the error's line
// less the lines the wrapper added, or the end of the cell when it is in
// the wrapper's closing brace.
func shiftErr(err error, added, cellLines int) error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		if line := e.Pos.Line - added; line <= cellLines {
			return fmt.Errorf("line %d: %s", max(1, line), e.Msg)
		}
		return fmt.Errorf("at the end of the cell: %s", e.Msg)
	}
	return err
}

func (ca *cellAST) calls(cell int, names, shadowed map[string]bool, dot bool) []Call {
	if ca.err != nil {
		return ca.scanCalls(cell, names, dot)
	}
	var out []Call
	for fi, f := range ca.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isCheck(call.Fun, names, dot) {
				return true
			}
			c := Call{Cell: cell, Line: ca.fset.Position(call.Pos()).Line - ca.offset[fi]}
			src := ca.src[fi]
			text := func(x ast.Node) string {
				return src[ca.fset.Position(x.Pos()).Offset:ca.fset.Position(x.End()).Offset]
			}
			if len(call.Args) > 0 {
				c.IDText = text(call.Args[0])
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					c.ID, _ = strconv.Unquote(lit.Value)
				}
			}
			switch {
			case fi == ca.statements:
				c.OutsideMain = true
				if len(call.Args) > 1 {
					c.Arg = text(call.Args[1])
				}
				c.Problem = "never ran: a call outside %% does not run (GoNB needs %% before statements, and fails to compile the cell); put %% on a line above it"
			case len(call.Args) != callArgs || call.Ellipsis.IsValid():
				c.Problem = fmt.Sprintf("Check takes an exercise id and a number; this call has %s", words.Plural(len(call.Args), "argument"))
				if len(call.Args) > 1 {
					c.Arg = text(call.Args[1])
				}
			case isPlaceholder(call.Args[1], names, dot):
				c.Arg, c.Form = text(call.Args[1]), FormPlaceholder
			default:
				c.Arg = text(call.Args[1])
				r, form, err := evalPrediction(call.Args[1], shadowed)
				if err != nil {
					c.Problem = strings.TrimPrefix(err.Error(), ErrPrediction.Error()+": ")
				}
				c.Value, c.Form, c.Truncated = r.Value, form, r.Truncated
			}
			if c.ID == "" && c.Problem == "" {
				c.Problem = fmt.Sprintf("the first argument, %s, is not a string literal: write the exercise id in quotes", clip(c.IDText, 40))
			}
			if c.Problem != "" {
				c.Form, c.Value = FormUnreadable, 0
			}
			out = append(out, c)
			return true
		})
	}
	return out
}

// isPlaceholder reports whether x is lab.YourPrediction (under any name
// the cell calls lab by, or bare after a dot import).
func isPlaceholder(x ast.Expr, names map[string]bool, dot bool) bool {
	switch f := x.(type) {
	case *ast.SelectorExpr:
		id, ok := f.X.(*ast.Ident)
		return ok && f.Sel.Name == Placeholder && names[id.Name]
	case *ast.Ident:
		return dot && f.Name == Placeholder
	case *ast.ParenExpr:
		return isPlaceholder(f.X, names, dot)
	}
	return false
}

func isCheck(fun ast.Expr, names map[string]bool, dot bool) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		id, ok := f.X.(*ast.Ident)
		return ok && f.Sel.Name == checkFunc && names[id.Name]
	case *ast.Ident:
		return dot && f.Name == checkFunc
	case *ast.ParenExpr:
		return isCheck(f.X, names, dot)
	}
	return false
}

// scanCalls finds Check calls in a cell that does not parse, token by
// token, so that each is reported rather than lost. None can be read: the
// cell never compiled, so the call never ran.
func (ca *cellAST) scanCalls(cell int, names map[string]bool, dot bool) []Call {
	return scanTokens(ca.raw, func(line int, id, idText string) Call {
		return Call{Cell: cell, Line: line, ID: id, IDText: idText,
			Problem: fmt.Sprintf("the cell does not compile (%v), so this call never ran", ca.err)}
	}, names, dot)
}

func scanTokens(src string, mk func(line int, id, idText string) Call, names map[string]bool, dot bool) []Call {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("cell.go", -1, len(src))
	s.Init(file, []byte(src), func(token.Position, string) {}, 0)
	type tok struct {
		pos token.Pos
		tok token.Token
		lit string
	}
	var win []tok
	var out []Call
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		win = append(win, tok{pos, t, lit})
		if len(win) > 5 {
			win = win[1:]
		}
		// Look for [NAME .] Check ( STRING
		n := len(win)
		if n < 2 || win[n-1].tok != token.LPAREN || win[n-2].tok != token.IDENT || win[n-2].lit != checkFunc {
			continue
		}
		start := win[n-2]
		qualified := n >= 4 && win[n-3].tok == token.PERIOD && win[n-4].tok == token.IDENT && names[win[n-4].lit]
		if !qualified && !(dot && (n < 3 || win[n-3].tok != token.PERIOD)) {
			continue
		}
		if qualified {
			start = win[n-4]
		}
		// The id is the next token, when it is a string.
		p2, t2, lit2 := s.Scan()
		id, idText := "", ""
		if t2 == token.STRING {
			id, _ = strconv.Unquote(lit2)
			idText = lit2
		} else if t2 != token.EOF {
			idText = lit2
			if idText == "" {
				idText = t2.String()
			}
		}
		win = append(win, tok{p2, t2, lit2})
		out = append(out, mk(fset.Position(start.pos).Line, id, idText))
		if t2 == token.EOF {
			break
		}
	}
	return out
}

// checkInText finds Check("id" in free text: comments, markdown.
var checkInText = regexp.MustCompile(checkFunc + `\s*\(\s*"([^"\n]*)"`)

func mentionsIn(text string, cell, line0 int, where string) []Mention {
	var out []Mention
	for _, m := range checkInText.FindAllStringSubmatchIndex(text, -1) {
		line := line0 + 1 + strings.Count(text[:m[0]], "\n")
		out = append(out, Mention{Cell: cell, Line: line, ID: text[m[2]:m[3]], Where: where})
	}
	return out
}

func (ca *cellAST) comments(cell int) []Mention {
	var out []Mention
	for fi, f := range ca.files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if !strings.Contains(c.Text, checkFunc) {
					continue
				}
				line := ca.fset.Position(c.Pos()).Line - ca.offset[fi]
				out = append(out, mentionsIn(c.Text, cell, line-1, "a comment")...)
			}
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
