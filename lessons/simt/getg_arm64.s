#include "textflag.h"

// func getg() uintptr
//
// getg returns the address of the running goroutine's g, which the
// runtime keeps in register g (R28): an identity of the goroutine that no
// other goroutine alive has, read in a nanosecond.
TEXT ·getg(SB), NOSPLIT|NOFRAME, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
