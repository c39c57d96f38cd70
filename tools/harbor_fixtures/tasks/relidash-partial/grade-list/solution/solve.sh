#!/bin/bash
printf %s 'a,b,c' > /app/list.txt
