package gradebook

import (
	"slices"
	"strings"
)

// Item is the class's item analysis of one question: how the learners
// answered it (item_analysis.csv, and the class summary).
type Item struct {
	// ID is the question's id (the "exercise" column).
	ID     string `json:"exercise"`
	Lesson string `json:"lesson"`
	// MaxPoints is the exercise's points, 0 when it is not graded.
	MaxPoints float64 `json:"max_points"`
	// Learners is the class's size; Answered the learners with a readable
	// prediction, Right those graded right; Missing and Unreadable the
	// others' rows; Overridden the overrides.
	Learners   int `json:"learners"`
	Answered   int `json:"answered"`
	Right      int `json:"right"`
	Wrong      int `json:"wrong"`
	Missing    int `json:"missing"`
	Unreadable int `json:"unreadable"`
	Overridden int `json:"overridden"`
	// Median is the median of the readable predictions, nil for none.
	Median *float64 `json:"median_prediction"`
	// Model and Measured are the answers, as in the rows.
	Model    *float64 `json:"model_answer"`
	Measured *float64 `json:"measured_answer"`
	// CommonWrong is the most common wrong prediction (the smallest on a
	// tie), CommonWrongCount how many learners gave it, Misconception
	// what the grader's hints say it points to ("" when none fits).
	CommonWrong      *float64 `json:"common_wrong"`
	CommonWrongCount int      `json:"common_wrong_count"`
	Misconception    string   `json:"misconception"`
}

// itemAnalysis computes the items from the rows, one per exercise, in the
// gradebook's exercise order.
func (gb *Gradebook) itemAnalysis() []Item {
	idx := map[string]int{}
	items := make([]Item, len(gb.Questions))
	preds := make([][]float64, len(gb.Questions))
	wrong := make([]map[float64]int, len(gb.Questions))
	for i, e := range gb.Questions {
		idx[e.ID] = i
		items[i] = Item{ID: e.ID, Lesson: e.Lesson, Learners: len(gb.Totals), Model: ptr(e.Model), Measured: e.Measured}
		if e.Graded {
			items[i].MaxPoints = e.Points
		}
		wrong[i] = map[float64]int{}
	}
	for _, r := range gb.Rows {
		i, ok := idx[r.ID]
		if !ok || r.Status == UnknownQuestion {
			continue
		}
		it := &items[i]
		if r.Override != nil {
			it.Overridden++
		}
		switch r.Status {
		case Missing:
			it.Missing++
			continue
		case Unreadable:
			it.Unreadable++
			continue
		case Right:
			it.Right++
		case Wrong:
			it.Wrong++
			wrong[i][*r.Prediction]++
		}
		if r.Prediction != nil {
			it.Answered++
			preds[i] = append(preds[i], *r.Prediction)
		}
	}
	for i := range items {
		it := &items[i]
		if p := preds[i]; len(p) > 0 {
			slices.Sort(p)
			m := p[len(p)/2]
			if len(p)%2 == 0 {
				m = (p[len(p)/2-1] + m) / 2
			}
			it.Median = ptr(m)
		}
		var best float64
		for v, n := range wrong[i] {
			if n > it.CommonWrongCount || n == it.CommonWrongCount && v < best {
				best, it.CommonWrongCount = v, n
			}
		}
		if it.CommonWrongCount > 0 {
			it.CommonWrong = ptr(best)
			if k := gb.keys[it.ID]; k != nil {
				it.Misconception = strings.Join(k.Verdict(best).Hints, " ")
			}
		}
	}
	return items
}

// kernelItems are the item analysis of the kernel exercises: how many
// learners passed, failed, did not try or could not be run, from the rows.
// They have no predictions, no answers and no misconception.
func (gb *Gradebook) kernelItems(kernels []KernelExercise) []Item {
	var items []Item
	for _, e := range kernels {
		it := Item{ID: e.ID, Lesson: lessonOfID(e.ID), MaxPoints: e.Points, Learners: len(gb.Totals)}
		for _, r := range gb.Rows {
			if r.ID != e.ID {
				continue
			}
			if r.Override != nil {
				it.Overridden++
			}
			switch r.Status {
			case Right:
				it.Right++
				it.Answered++
			case Wrong:
				it.Wrong++
				it.Answered++
			case Missing:
				it.Missing++
			case Unreadable:
				it.Unreadable++
			}
		}
		items = append(items, it)
	}
	return items
}
