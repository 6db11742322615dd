package mnist

// Stripes returns n images in MNIST's format for tests of training
// programs: image i has label i mod 10 and a bright horizontal stripe
// whose height says the label, so a small model learns it in a few steps.
func Stripes(n int) *Set {
	s := &Set{Pixels: make([]float32, n*ImageSize), Labels: make([]int32, n)}
	for i := range s.Labels {
		s.Labels[i] = int32(i % Classes)
		for j := range ImageSize {
			if j/Cols/3 == int(s.Labels[i]) {
				s.Pixels[i*ImageSize+j] = float32((i+j)%128+128) / 255
			}
		}
	}
	return s
}
