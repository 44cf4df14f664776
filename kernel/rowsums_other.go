//go:build !amd64

package kernel

// sumVec returns 0, 0: the portable loop sums everything.
func sumVec(x []float32) (float64, int) { return 0, 0 }

// sqDevVec returns 0, 0: the portable loop sums everything.
func sqDevVec(x []float32, mean float64) (float64, int) { return 0, 0 }

// maxVec returns 0, 0: the portable loop looks at everything.
func maxVec(x []float32) (float32, int) { return 0, 0 }
