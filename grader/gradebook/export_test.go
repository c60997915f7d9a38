package gradebook

// What the tests of the whole pipeline (package gradebook_test: notebooks
// read, graded, and written by package report, which imports this one)
// use of the helpers of this package's own tests.
var (
	GradeSamples = gradeSamples
	GradeSubs    = gradeSubs
	Golden       = golden
	Sub          = sub
	TotalOf      = totalOf
	Hostile      = hostile
	TestGrader   = testGrader
	FixedModTime = fixedModTime
	WriteBatch   = writeBatch
	Ptr          = ptr
)

// TestLimit is testLimit.
const TestLimit = testLimit
