"""The timing harness: timing loop and stopping rule, monitors, process isolation, machine facts."""
