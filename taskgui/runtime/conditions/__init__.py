"""Reading the machine's state (power, network, idle) for tasks' run conditions."""
