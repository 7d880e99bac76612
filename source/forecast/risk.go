package forecast

import (
	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/risk"
)

// RiskFigure is a forecast as source/risk's copy-on-write projection (its
// Input.Forecast): the calibrated figure or the uniform bound. The worst
// case rests on no write rate at all and a forkless forecast has no child:
// neither is a projection the memory check should ask twice over.
func RiskFigure(f source.Opt[Forecast]) source.Opt[risk.Figure] {
	fc, ok := f.Get()
	if !ok || (fc.Basis != Calibrated && fc.Basis != Bound) {
		return source.Opt[risk.Figure]{}
	}
	return source.Some(risk.Figure{Bytes: fc.COW, From: "forecast (" + string(fc.Basis) + ")"})
}
