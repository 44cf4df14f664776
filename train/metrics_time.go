package train

// Times returns the training time of each training and evaluation row of the log counted
// across resumes. Run.Train continues the clock of a resumed run, but a log written before
// commit 7e45028 may restart it at zero in each session: a training row whose elapsed time
// is below its predecessor's starts a new session, and every row of a session is offset by
// the lengths (latest time logged) of the sessions before it. An evaluation row after k
// steps belongs to the session of training step k-1, which it follows in the log.
func (m Metrics) Times() (trainT, evalT []float64) {
	seg, evalSeg, offset := m.sessions()
	trainT, evalT = make([]float64, len(m.Train)), make([]float64, len(m.Eval))
	for i, r := range m.Train {
		trainT[i] = offset[seg[i]] + r.ElapsedS
	}
	for i, r := range m.Eval {
		evalT[i] = offset[evalSeg[i]] + r.ElapsedS
	}
	return trainT, evalT
}

// EarlierSessions returns the training time of the sessions before the one of the last
// training row (Times): 0 for a log whose clock never restarted.
func (m Metrics) EarlierSessions() float64 {
	if len(m.Train) == 0 {
		return 0
	}
	seg, _, offset := m.sessions()
	return offset[seg[len(seg)-1]]
}

// sessions returns the session of each training and evaluation row (Times) and the time
// at which each session starts.
func (m Metrics) sessions() (seg, evalSeg []int, offset []float64) {
	seg = make([]int, len(m.Train))
	var starts []int // first step of each session after the first
	for i, r := range m.Train {
		if i > 0 && r.ElapsedS < m.Train[i-1].ElapsedS {
			starts = append(starts, r.Step)
		}
		seg[i] = len(starts)
	}
	evalSeg = make([]int, len(m.Eval))
	for i, r := range m.Eval {
		for _, s := range starts {
			if s <= r.Step-1 {
				evalSeg[i]++
			}
		}
	}
	end := make([]float64, len(starts)+1)
	longer := func(s int, t float64) {
		if t > end[s] {
			end[s] = t
		}
	}
	for i, r := range m.Train {
		longer(seg[i], r.ElapsedS)
	}
	for i, r := range m.Eval {
		longer(evalSeg[i], r.ElapsedS)
	}
	offset = make([]float64, len(end))
	for i := 1; i < len(end); i++ {
		offset[i] = offset[i-1] + end[i-1]
	}
	return seg, evalSeg, offset
}
