"""Standings among friends: tables of the players who play together (issue 41)."""
