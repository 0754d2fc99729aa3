"""Statistics that reports call: intervals over seeds and questions, sequential verdicts, family-wise control."""
