"""What a run leaves behind: the console matrix, JSON and JUnit reports, counterexample files and their replay."""
