#include "textflag.h"

// func callerPC() uintptr
//
// callerPC returns the return address of the function that calls it: with
// no frame of its own, BP is still its caller's frame pointer, and the word
// above the saved BP is where that caller returns to.
TEXT ·callerPC(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ 8(BP), AX
	MOVQ AX, ret+0(FP)
	RET
