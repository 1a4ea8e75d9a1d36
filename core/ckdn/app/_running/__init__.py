"""Running a check: the run as one value through named steps, and what the steps need."""
