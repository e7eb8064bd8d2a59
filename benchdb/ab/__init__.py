"""Interleaved A/B runs: two environments measured in alternation, their trials, stopping rule and files."""
