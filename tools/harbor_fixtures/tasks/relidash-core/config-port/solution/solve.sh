#!/bin/bash
printf %s 'port=8080' > /app/server.conf
