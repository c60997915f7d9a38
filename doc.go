// Package coalesce is the map of a course on GPU global memory and
// coalescing: Go notebooks (GoNB) that predict with an exact sector model,
// measure on a real GPU, and grade what learners predict. It holds no code
// but Source, the course's own source built into the binary for
// grader/sandbox; go doc on each package below says what it does.
//
// # Layers
//
// Each package imports only packages of the layers below its own
// (TestLayers holds them to it), and each top-level folder sits on one
// floor: no package of one folder imports another folder's package while
// that folder imports back (TestFoldersAreFloors):
//
//	8  cmd/coalesce        the command line over all of it
//	   internal/notebook/cmd/numbers  the notebooks' numbers check (scripts/run_notebooks.py runs it)
//	   cmd/leaks           the leak test: no answer shown before its question is answered (run_notebooks runs it)
//	7  grader/gradebook/report  a graded class written out: gradebook.csv and .json, totals, items, summary, feedback
//	6  lab                 the notebook face: what cells call; the only package that talks to GoNB
//	   grader/gradebook    an instructor's batch grading: each learner's rows (questions, kernels), totals, items
//	5  cuda/usercuda       a learner's CUDA kernel compiled, run, checked and profiled on the GPU
//	   cuda/cudatest       for tests: the GPU opened once, or the test skipped saying what is missing
//	   calibrate           the model fitted to the GPU at hand: what coalesce calibrate
//	                       measures, the fit, the profile cache, the profile for a live GPU
//	   grader/gradebook/intake  which notebooks, whose, read within limits
//	4  cuda                the kernels, the harness and the live GPU
//	   lessons/plots       the charts and the warp diagram (draws; never displays)
//	   lessons/exercises   the "fix this kernel" exercises: seeded variants, Go kernels run by simt, CUDA as data
//	   lessons/exercises/exercisestest  for tests: kernels a learner might write, right, slow and wrong
//	   grader              the question bank, answer keys and verdicts
//	3  lessons/figures     every derived figure, defined once, for model and measurement
//	   lessons/simt        a learner's kernel in Go, run thread by thread, its warps priced by the model
//	   cuda/toolkit        nvcc, ncu, compute-sanitizer and nvidia-smi: found once, run one way, read one way
//	   cuda/reference      the course's recording (h200.jsonl), built in for machines without a GPU
//	   grader/gradebook/answers  a learner's lab.Check predictions and lab.Try kernels, read from notebook source
//	3  lessons/sectors/sectorstest  for tests: the model's predictions of the recordings, from a file its source's fingerprint names
//	2  lessons/sectors     the model: addresses to sectors, requests, DRAM bytes and time
//	   lessons/measure     a measured launch, a set of them, the run-file format
//	   internal/attempt    a learner's attempts, recorded beside the notebook
//	1  lessons/spec        the experiment spec: the kernel table and the field table
//	   grader/sandbox      a learner's Go kernel vetted, built and run in a child process with limits
//	   grader/collect      a class's notebooks fetched from a JupyterHub (its REST API, a service token)
//	   grader/gradebook/csvsafe  CSV that a spreadsheet shows and never runs
//	   internal/words      plurals ("4 sectors"), counts written as units writes them
//	   internal/notebook   ipynb reading, and the numbers its prose states, rounded as units rounds
//	   internal/progress   a status line kept up to date while a slow step runs
//	0  .                   this map, and Source: the packages a learner's kernel is built against, in the binary
//	   units               how a number of each unit is written: digits, rounding, separators, symbols,
//	                       a column's scaler, the exact form for machine-readable output, equations true as printed
//	   lessons/devices     GPU profiles (profiles.json)
//	   lessons/metrics     Nsight Compute's metric names
//	   internal/...        plumbing: atomicfile (a file replaced whole), dockerfile,
//	                       constexpr (a Go constant expression valued as the compiler values it),
//	                       procgroup (a program and all it starts, stopped together),
//	                       capped (what an untrusted process prints, kept within a bound),
//	                       rlimit (a process's address space, CPU, file size and files, bounded by the OS),
//	                       faketool (stand-ins for nvcc, ncu and the rest, for tests)
//
// deploy holds only the tests of the Docker image, its install and a real
// JupyterHub class (TestJupyterHub).
//
// # To add a kernel
//
//  1. lessons/spec/kernels.go: its entry in the kernel table (fields,
//     rules, threads, buffers, useful bytes, memcpy ceiling) and its name.
//  2. cuda/src/kernels.cuh: its CUDA body, named k_<kernel>; and
//     cuda/src/harness.cu: its line in kKernels, which fills its buffers,
//     launches it and checks its output.
//  3. lessons/sectors/addresses.go: its address function, the model's copy
//     of the body (and its loads in flight, when not one).
//
// TestKernelTableIsComplete (spec), TestKernelTablesAgree (cuda) and
// TestEveryKernelHasAddresses (sectors) fail until all three are there;
// TestGPUProfileMatchesModel then holds the model to ncu on a GPU.
//
// # To change the model
//
// Any change to lessons/sectors or the packages it imports (spec,
// devices and its profiles.json, metrics) changes the fingerprint that
// testdata/predictions.jsonl and calibrate/testdata/predictions.jsonl
// name: the accuracy tests then predict every recorded launch again (a
// minute or two, as right) and say so, until `make predictions` rewrites
// the files. A rewrite whose diff is the fingerprint alone moved no
// prediction; any other line it changes is a launch the change moved,
// and TestPublishedAccuracy says which published figure moved with it.
//
// # To add a GPU profile
//
// One record in lessons/devices/profiles.json. Its name is what a spec's
// "device" says; match lists the names the driver reports for the GPU
// (cudaDeviceProp.name, nvidia-smi), each claimed by one profile only;
// compute_capability sets the per-SM limits the CUDA C++ Programming
// Guide tabulates. sources says, for every path devices.Paths lists,
// where the value comes from: "measured on <GPU>, driver, CUDA, date:
// <command>", or a named datasheet, whitepaper or guide table. What only
// a measurement gives (the dram capacities and spread, the time
// parameters, the default L2 fetch granularity) is, until the GPU is
// measured, an estimate: listed in estimated, its source saying how it
// was derived ("estimate: the H200's measured ... ratio times this L2's
// ..."). Validate refuses a record without a source for a value, an
// estimate of no known path, or a driver name another profile claims;
// TestShipped (devices) holds each record to the numbers its sources
// cite. A profile made at run time (a calibrated one) is added with
// devices.Register instead, and chosen for specs without "device" with
// devices.Use.
//
// # To add a question
//
// One entry in grader/questions.json: its id, text, unit, specs, the
// figure it asks for, what grades it and its tolerances. ParseBank refuses
// what does not hold together; the lesson's notebook asks for it with
// lab.Check. (A kernel exercise, which the learner answers with code, is
// one entry in the table of lessons/exercises; go doc ./lessons/exercises.)
//
// # To add a figure
//
// One variable in lessons/figures (name, label, unit, level, how it is
// computed from Values) and its place in the derived list; exercises,
// tables, charts and `coalesce compare -figures` can then all use it.
package coalesce
