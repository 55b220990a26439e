"""A driver that says it speaks another protocol."""

from _driverlib import HELLO, serve

serve(lambda _: None, hello={**HELLO, "protocol": "sessionlog-driver/9"})
