"""Titan Post: a play-by-email turn server for Titan Race."""
