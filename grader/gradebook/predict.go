package gradebook

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/scanner"
	"go/token"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/internal/attempt"
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
	// a variable, a function call, a string, a call that does not compile.
	FormUnreadable Form = iota
	// FormLiteral is a number, with or without a sign: 32, -0.5, 1e3, 0x20.
	FormLiteral
	// FormConstant is arithmetic on numbers (+ - * / % and parentheses),
	// evaluated with Go's own constant rules, so 64/2 is 32 and 1/8 is 0
	// (integer division) exactly as the running notebook saw it.
	FormConstant
	// FormPlaceholder is the placeholder a lesson ships, lab.YourPrediction:
	// no prediction was written, and the exercise counts as missing.
	FormPlaceholder
)

// Placeholder is the name of the placeholder prediction in lab.
const Placeholder = "YourPrediction"

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
// source text: a numeric literal, or arithmetic on numeric literals (see
// Form). Anything else is an error wrapping ErrPrediction that says what
// was found.
func ParsePrediction(src string) (float64, Form, error) {
	x, err := parser.ParseExpr(src)
	if err != nil {
		return 0, FormUnreadable, fmt.Errorf("%w: %q is not a Go expression", ErrPrediction, clip(src, 40))
	}
	return evalPrediction(x)
}

func evalPrediction(x ast.Expr) (float64, Form, error) {
	v, _, err := evalConst(x, 0, false)
	if err != nil {
		return 0, FormUnreadable, fmt.Errorf("%w: %v", ErrPrediction, err)
	}
	f, _ := constant.Float64Val(constant.ToFloat(v))
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, FormUnreadable, fmt.Errorf("%w: the number overflows float64 (Go would not compile it)", ErrPrediction)
	}
	form := FormConstant
	if isSignedLiteral(x) {
		form = FormLiteral
	}
	return f, form, nil
}

// truncates reports whether Go's integer division makes x differ from
// the same arithmetic done on paper: 100/6 is 16, not 16.67.
func truncates(x ast.Expr) bool {
	exact, _, err := evalConst(x, 0, true)
	if err != nil {
		return false
	}
	goV, _, err := evalConst(x, 0, false)
	if err != nil {
		return false
	}
	return constant.Compare(constant.ToFloat(exact), token.NEQ, constant.ToFloat(goV))
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

// maxDepth bounds the nesting evalConst follows, so that a pathological
// expression costs little.
const maxDepth = 64

// evalConst evaluates a constant expression of numeric literals, tracking
// whether it is an untyped integer (for Go's integer division).
// With realDiv, every division is exact, as on paper.
func evalConst(x ast.Expr, depth int, realDiv bool) (v constant.Value, isInt bool, err error) {
	if depth > maxDepth {
		return nil, false, errors.New("the expression is nested too deeply")
	}
	switch e := x.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.INT, token.FLOAT:
			v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
			if v.Kind() == constant.Unknown {
				return nil, false, fmt.Errorf("%s is not a valid number", e.Value)
			}
			return v, e.Kind == token.INT, nil
		case token.IMAG:
			return nil, false, fmt.Errorf("%s is an imaginary number", e.Value)
		case token.CHAR:
			return nil, false, fmt.Errorf("%s is a character, not a number", e.Value)
		}
		return nil, false, fmt.Errorf("%s is a string, not a number", clip(e.Value, 40))
	case *ast.ParenExpr:
		return evalConst(e.X, depth+1, realDiv)
	case *ast.UnaryExpr:
		if e.Op != token.SUB && e.Op != token.ADD {
			return nil, false, fmt.Errorf("operator %s: only + - * / %% and parentheses are read", e.Op)
		}
		v, isInt, err := evalConst(e.X, depth+1, realDiv)
		if err != nil {
			return nil, false, err
		}
		return constant.UnaryOp(e.Op, v, 0), isInt, nil
	case *ast.BinaryExpr:
		switch e.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM:
		default:
			return nil, false, fmt.Errorf("operator %s: only + - * / %% and parentheses are read", e.Op)
		}
		a, aInt, err := evalConst(e.X, depth+1, realDiv)
		if err != nil {
			return nil, false, err
		}
		b, bInt, err := evalConst(e.Y, depth+1, realDiv)
		if err != nil {
			return nil, false, err
		}
		isInt := aInt && bInt
		op := e.Op
		switch op {
		case token.QUO, token.REM:
			if constant.Sign(b) == 0 {
				return nil, false, errors.New("division by zero (Go would not compile it)")
			}
			if op == token.REM && !isInt {
				return nil, false, errors.New("% of a non-integer (Go would not compile it)")
			}
			if op == token.QUO && isInt && !realDiv {
				op = token.QUO_ASSIGN // integer division, as Go does for untyped integers
			}
		}
		return constant.BinaryOp(a, op, b), isInt, nil
	case *ast.Ident:
		return nil, false, fmt.Errorf("%s is a name, not a number written in the call", e.Name)
	case *ast.SelectorExpr:
		return nil, false, fmt.Errorf("%s is a name, not a number written in the call", exprString(e))
	case *ast.CallExpr:
		return nil, false, fmt.Errorf("%s is a function call or conversion: write the number alone", clip(exprString(e), 40))
	}
	return nil, false, fmt.Errorf("%s is not a number", clip(exprString(x), 40))
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
			if strings.Contains(c.Source, "Check") {
				f.Mentions = append(f.Mentions, mentionsIn(c.Source, i, 0, "a "+cellTypeName(c.Type)+" cell")...)
			}
			continue
		}
		if !strings.Contains(c.Source, "Check") {
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
		f.Calls = append(f.Calls, ca.calls(i, names, dot)...)
		f.Mentions = append(f.Mentions, ca.comments(i)...)
	}
	return f
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
}

const (
	filePrefix = "package main\n"
	bodyPrefix = "package main\nfunc _() {\n"
)

func parseCell(src string) *cellAST {
	g := notebook.SplitGoNB(src)
	ca := &cellAST{fset: token.NewFileSet(), notGo: g.NotGo}
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
		// Declarations, as GoNB wants them; statements outside main, as
		// some kernels allow, parse as a function body instead.
		if err := add(filePrefix, g.Decls); err != nil {
			if err2 := add(bodyPrefix, g.Decls); err2 != nil {
				ca.err = shiftErr(err, 1, lines)
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

func (ca *cellAST) calls(cell int, names map[string]bool, dot bool) []Call {
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
			case len(call.Args) != 2 || call.Ellipsis.IsValid():
				c.Problem = fmt.Sprintf("Check takes an exercise id and a number; this call has %s", words.Plural(len(call.Args), "argument"))
				if len(call.Args) > 1 {
					c.Arg = text(call.Args[1])
				}
			case isPlaceholder(call.Args[1], names, dot):
				c.Arg, c.Form = text(call.Args[1]), FormPlaceholder
			default:
				c.Arg = text(call.Args[1])
				var err error
				c.Value, c.Form, err = evalPrediction(call.Args[1])
				if err != nil {
					c.Problem = strings.TrimPrefix(err.Error(), ErrPrediction.Error()+": ")
				} else if c.Form == FormConstant {
					c.Truncated = truncates(call.Args[1])
				}
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
		return ok && f.Sel.Name == "Check" && names[id.Name]
	case *ast.Ident:
		return dot && f.Name == "Check"
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
		if n < 2 || win[n-1].tok != token.LPAREN || win[n-2].tok != token.IDENT || win[n-2].lit != "Check" {
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
var checkInText = regexp.MustCompile(`Check\s*\(\s*"([^"\n]*)"`)

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
				if !strings.Contains(c.Text, "Check") {
					continue
				}
				line := ca.fset.Position(c.Pos()).Line - ca.offset[fi]
				out = append(out, mentionsIn(c.Text, cell, line-1, "a comment")...)
			}
		}
	}
	return out
}

func exprString(x ast.Expr) string {
	switch e := x.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "(…)"
	case *ast.BasicLit:
		return e.Value
	case *ast.CompositeLit:
		return "a composite literal"
	case *ast.FuncLit:
		return "a function literal"
	case *ast.IndexExpr:
		return exprString(e.X) + "[…]"
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.UnaryExpr:
		return e.Op.String() + exprString(e.X)
	case *ast.BinaryExpr:
		return exprString(e.X) + " " + e.Op.String() + " " + exprString(e.Y)
	case *ast.ParenExpr:
		return "(" + exprString(e.X) + ")"
	}
	return fmt.Sprintf("%T", x)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
