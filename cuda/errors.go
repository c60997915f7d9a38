package cuda

import "errors"

// ErrStandIn is a strict GPU (COALESCE_MEASURE=strict) asked for what
// only a stand-in could give: counters without ncu, or counters the driver
// refuses ncu, which live mode borrows from the recording or the model.
var ErrStandIn = errors.New("strict: no stand-in for a live measurement")
