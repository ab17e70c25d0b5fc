# Parameters of the demo experiment.
CLIP := 1
