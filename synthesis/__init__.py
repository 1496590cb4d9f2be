"""Trajectories over verified links: plans, their execution, language, typed records, exports, batches, report."""
