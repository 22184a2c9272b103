"""Every threshold problems() uses, in one place (README: "What problems() looks for").
Calibrated on the healthy models of tests/problem_models.py, which must get no problem line,
and on the planted bugs there, which must be named."""

# A layer group whose backward output (gradients leaving it toward the inputs) is this many
# times what entered it makes the gradient explode. Healthy layers stay within ~x11 (Linear,
# conv, BatchNorm, LayerNorm, attention; the most in the tiny Llama's RMSNorm and decoder
# layers); x1000-scaled weights give ~x1e3.
EXPLODING_FACTOR = 100.0

# Total norm of every parameter's gradient, relative to the gradient the model's output got
# from the loss: the healthy models stay within ~x200 of it (ResNet-18 at 64x64: x160; conv
# weights sum over every position, so bigger inputs and batches raise it): a coarse backstop.
EXPLODING_TOTAL_RATIO = 1e5

# A layer whose incoming gradient is below this fraction of the gradient entering the layer
# nearest the loss gets (almost) nothing to learn from: vanishing gradients.
VANISHING_FRACTION = 1e-4

# An op whose output gradient is below this fraction of its input gradient is where a vanishing
# gradient is lost (a saturated sigmoid/tanh: its derivative is ~0).
VANISHING_OP_SHRINK = 1e-2

# How many of the ops that shrink the gradient most a vanishing problem names.
VANISHING_OPS_NAMED = 3
