"""The command line. ``python -m paddleviz_widget`` (main.py: run a script, write its graph;
capture.py: which backward calls are kept; script_runner.py: run it as Python would) and
``python -m paddleviz_widget.run`` (run.py: run a script inside trace())."""
