#include "textflag.h"

// func getg() uintptr
//
// getg returns the address of the running goroutine's g, which the runtime
// keeps in thread-local storage: an identity of the goroutine that no
// other goroutine alive has, read in a nanosecond.
TEXT ·getg(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
