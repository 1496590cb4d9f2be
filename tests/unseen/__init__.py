"""A second family of emulated public services that the sandbox world does not know (other agencies, other envelope
styles, all-optional filters, dates in other formats, a 10-digit code scheme that is not 법정동, a prefixed station
code). It stands for the APIs users will register: the engine is scored on it, never tuned to it."""
