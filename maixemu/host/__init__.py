"""The PC side: camera sources, display sinks, and the /sd and /flash storage mapping."""
