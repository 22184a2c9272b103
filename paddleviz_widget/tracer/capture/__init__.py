"""Running Paddle under observation: trace() sessions, log and dump capture, replays."""
