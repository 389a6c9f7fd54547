"""The pipeline bench behind ``scripts/bench``: pages/s, stage times and scaling with W."""
