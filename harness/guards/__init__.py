"""Stream guards: role-marker, artifact-echo, prompt budgets."""
