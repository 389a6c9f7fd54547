# The fleet simulator's committed report. The top-level Makefile includes this file.
#
#   make fleet-report   scripts/fleet-sim --report: issue 25's targets, the before/after tables
#                       and every failure scenario into bench/results/fleet/ (about 4 CPU-minutes);
#                       tests/test_fleet_sim.py fails while that report is older than the code

.PHONY: fleet-report

fleet-report: $(STAMP)
	scripts/fleet-sim --report
