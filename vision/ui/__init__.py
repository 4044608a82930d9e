"""What people look at: the referee station, the analysis report, annotated photos."""
