from p2pkoikoi.cli import entry

entry()
