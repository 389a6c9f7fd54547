"""The measuring tools: the pipeline bench, the quality report and the fleet simulator."""
