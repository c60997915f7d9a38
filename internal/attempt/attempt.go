// Package attempt keeps a learner's predictions per exercise: the first
// one, the last one and how many there were. The first is the prediction
// made before the answer was seen, which an instructor may want to grade;
// the count shows a learner who ran a guess and then copied the answer.
//
// A Record travels two ways. lab.Check writes it to a Store, a small JSON
// file beside the notebook (GoNB runs every cell as a new program, so the
// count must live in a file), and shows it in the cell's output under the
// MIME type MIMEType, so that the saved notebook holds it too even when
// the file is lost. The gradebook reads it back from the notebook with
// Parse.
//
// A record is evidence, not proof: the learner owns both the file and the
// notebook's outputs and can edit either.
package attempt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// MIMEType is the MIME type under which a Check cell's output carries its
// record, beside the verdict's HTML. Its value is the record's JSON, as a
// JSON string (GoNB passes a cell's display data on as strings).
const MIMEType = "application/vnd.coalesce.attempt+json"

// Value is one prediction and when it was made.
type Value struct {
	Value float64   `json:"value"`
	Time  time.Time `json:"time"`
}

// Record is the attempts at one exercise: the first and last predictions
// and their number.
type Record struct {
	ID       string `json:"id"`
	First    Value  `json:"first"`
	Attempts int    `json:"attempts"`
	Last     Value  `json:"last"`
}

// ErrRecord is the error Parse wraps for data that is not a record.
var ErrRecord = errors.New("attempt: not an attempt record")

// Add returns r with one more attempt, value v at time t; the zero Record
// becomes the first attempt at id.
func (r Record) Add(id string, v float64, t time.Time) Record {
	if r.Attempts == 0 {
		r = Record{ID: id, First: Value{v, t}}
	}
	r.Attempts++
	r.Last = Value{v, t}
	return r
}

// check says what is wrong with a record read from outside, if anything.
func (r Record) check() error {
	switch {
	case r.ID == "":
		return fmt.Errorf("%w: no id", ErrRecord)
	case r.Attempts < 1:
		return fmt.Errorf("%w: %s: attempts is %d, want 1 or more", ErrRecord, r.ID, r.Attempts)
	case math.IsNaN(r.First.Value) || math.IsInf(r.First.Value, 0) || math.IsNaN(r.Last.Value) || math.IsInf(r.Last.Value, 0):
		return fmt.Errorf("%w: %s: a value is not a finite number", ErrRecord, r.ID)
	case r.First.Time.IsZero() || r.Last.Time.IsZero():
		return fmt.Errorf("%w: %s: a time is missing", ErrRecord, r.ID)
	case r.Last.Time.Before(r.First.Time):
		return fmt.Errorf("%w: %s: the last attempt (%s) is before the first (%s)", ErrRecord, r.ID,
			r.Last.Time.Format(time.RFC3339), r.First.Time.Format(time.RFC3339))
	}
	return nil
}

// Parse reads a record from its JSON: an object, or a JSON string holding
// one (as a saved notebook keeps MIMEType's value). It rejects unknown
// fields, a missing id or time, a count below 1 and values that are not
// finite.
func Parse(data []byte) (Record, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return Record{}, fmt.Errorf("%w: %v", ErrRecord, err)
		}
		data = []byte(s)
	}
	var r Record
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrRecord, err)
	}
	if d.More() {
		return Record{}, fmt.Errorf("%w: data after the record", ErrRecord)
	}
	if err := r.check(); err != nil {
		return Record{}, err
	}
	return r, nil
}
