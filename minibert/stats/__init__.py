"""Statistics that reports call: intervals over seeds and shared questions (bootstrap), the sequence comparisons
stop on (betting), failure rates (failures) and family-wise control (holm)."""
