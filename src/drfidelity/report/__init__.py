"""Ranking tables, REPORT.md and the LaTeX paper tables, all from the aggregated CSV."""
