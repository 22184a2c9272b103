"""Reading live Paddle objects: the GradNode walk, tensors, parameters, PyLayer contexts."""
