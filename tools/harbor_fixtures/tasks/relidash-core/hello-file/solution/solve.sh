#!/bin/bash
printf %s 'hello' > /app/hello.txt
